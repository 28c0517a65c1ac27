"""JSON from outside, parsed within bounds: a size and a nesting limit, each with its own message.

Python's decoder recurses once per level of nesting, so a 2 KB line of a thousand brackets
raises RecursionError (not ValueError): a reader that only expects malformed JSON dies on
it, and whatever walks the result next (pydantic, our own code) recurses again. Every place
that parses JSON it did not write (the MCP wire, REST bodies, JSON/JSONL files) checks the
depth here first, in one linear scan that skips string contents, and refuses anything deeper
than real data ever is.
"""

from __future__ import annotations

import json
import re

from deepsearcher.types.json import JSONValue

__all__ = ["MAX_DEPTH", "STRUCTURE_TOKENS", "InputLimitError", "check_depth", "loads", "nesting_depth"]

#: Deeper than any document, request or record we read (the deepest real ones are below 20).
MAX_DEPTH = 64

#: A JSON string (skipped whole) or one bracket: what a depth scan looks at.
STRUCTURE_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class InputLimitError(ValueError):
    """Input refused for its size or nesting, before it is parsed; the message says which limit."""


def nesting_depth(text: str | bytes) -> int:
    """The deepest nesting of arrays and objects in JSON `text` (brackets inside strings do not count)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    depth = deepest = 0
    for match in STRUCTURE_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth = max(0, depth - 1)
    return deepest


def check_depth(text: str | bytes, what: str, max_depth: int = MAX_DEPTH) -> None:
    """Raise InputLimitError when `text` nests deeper than `max_depth`; `what` names it in the message."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if text.count("[") + text.count("{") <= max_depth:
        return  # cannot be deeper: the common case costs two counts
    depth = nesting_depth(text)
    if depth > max_depth:
        raise InputLimitError(f"{what} nests arrays/objects {depth} levels deep; at most {max_depth} are accepted.")


def loads(text: str | bytes, what: str, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> JSONValue:
    """`json.loads(text)` within the limits; InputLimitError for a limit, json.JSONDecodeError for bad JSON."""
    if max_bytes is not None and len(text) > max_bytes:
        raise InputLimitError(f"{what} is {len(text):,} bytes; at most {max_bytes:,} are accepted.")
    check_depth(text, what, max_depth)
    return json.loads(text)
