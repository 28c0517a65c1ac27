"""Text every page of a site repeats and no reader searches for, removed before chunking."""

from __future__ import annotations

import re

#: Sphinx and MkDocs put a permalink sign after each heading and definition ("Installation¶"); in
#: the Python docs it sat in 89 of 120 chunks.
_PERMALINK = re.compile(r"[ \t]*¶(?=[ \t]*$)", re.MULTILINE)


def strip_permalinks(text: str) -> str:
    """`text` without the permalink signs that end its lines."""
    return _PERMALINK.sub("", text) if "¶" in text else text
