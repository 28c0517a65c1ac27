"""Reading files for loaders: one place that turns OS and decoding failures into LoaderError.

Every loader reads through here so that a missing, unreadable, empty, binary or
non-UTF-8 file fails the same way, with the file named and a reason a user can act on.
"""

from __future__ import annotations

import codecs
import os

from deepsearcher.types import LoaderError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def read_bytes(file_path: str | os.PathLike[str]) -> bytes:
    """The file's bytes; a missing, unreadable or zero-byte file raises LoaderError."""
    path = os.fspath(file_path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError as exc:
        reason = "dangling symbolic link (its target does not exist)" if os.path.islink(path) else "file not found"
        raise LoaderError(path, reason) from exc
    except IsADirectoryError as exc:
        raise LoaderError(path, "is a directory, not a file") from exc
    except PermissionError as exc:
        raise LoaderError(path, "permission denied") from exc
    except OSError as exc:
        raise LoaderError(path, f"cannot read file: {exc.strerror or exc}") from exc
    if not data:
        raise LoaderError(path, "empty file")
    return data


def decode_text(path: str, data: bytes) -> str:
    """Decode UTF-8 (a UTF-8 or UTF-16 byte-order mark is honoured); NUL bytes mean binary."""
    if data.startswith(_UTF16_BOMS):
        return _decode(path, data, "utf-16", 0)
    if b"\x00" in data:
        raise LoaderError(path, "binary file, not text")
    if data.startswith(codecs.BOM_UTF8):
        return _decode(path, data[len(codecs.BOM_UTF8) :], "utf-8", len(codecs.BOM_UTF8))
    return _decode(path, data, "utf-8", 0)


def _decode(path: str, data: bytes, encoding: str, offset: int) -> str:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        position = offset + exc.start
        raise LoaderError(
            path,
            f"not valid {encoding.upper()} text (byte 0x{data[exc.start]:02x} at position {position}); "
            "convert the file to UTF-8",
        ) from exc
    if not text.strip():
        raise LoaderError(path, "empty file (only whitespace)")
    return text


def read_text(file_path: str | os.PathLike[str]) -> str:
    """The file's text, with every failure reported as LoaderError."""
    path = os.fspath(file_path)
    return decode_text(path, read_bytes(path))
