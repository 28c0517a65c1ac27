"""File names of any bytes: a stored reference that is valid UTF-8, and a form fit to print.

POSIX names are bytes: Python hands undecodable ones over with lone surrogates, which
neither Milvus (UTF-8 strings) nor a terminal can take, and a newline in a name breaks a
table row. Neither is a reason to refuse the file.
"""

from __future__ import annotations


def safe_reference(path: str) -> str:
    """`path` with undecodable bytes written as `\\xNN` (a name already valid is unchanged)."""
    try:  # a valid name round-trips unchanged; surrogate-escaped bytes come back as \xNN
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return path.encode("utf-8", "backslashreplace").decode("utf-8")


def shown(text: str) -> str:
    """`text` for a terminal: control characters (a newline in a file name) escaped, as repr would."""
    text = safe_reference(text)
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
