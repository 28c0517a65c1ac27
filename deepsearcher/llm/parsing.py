"""Reading what a model answered: one tolerant parser for lists, numbers and yes/no.

Models wrap answers in <think> blocks, ```json fences and prose, use single quotes and
trailing commas, and get cut off mid-list. Every parser here strips all of that, and
raises `LLMOutputError` (naming the step and showing the start of the output) only when
no answer can be recovered. Text in, values out: the LLM round trip with a repair
retry lives in `deepsearcher.llm.structured`.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from deepsearcher.llm.errors import LLMOutputError

__all__ = [
    "LLMOutputError",
    "literal_eval",
    "parse_json",
    "parse_list",
    "parse_number",
    "parse_yes_no",
    "remove_think",
    "strip_code_fences",
]

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_OPEN = re.compile(r"^\s*<(think|thinking|reasoning)>", re.I)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)


def remove_think(text: str | None) -> str:
    """Drop reasoning blocks: `<think>…</think>`, an unclosed leading `<think>…` (the
    reply was cut off while reasoning) and everything before a stray `</think>` (servers
    that strip the opening tag)."""
    if not text:
        return ""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    if _THINK_OPEN.match(text):
        return ""
    return text.strip()


def strip_code_fences(text: str) -> str:
    """The content of the first ``` fenced block (also an unclosed one), else the text."""
    match = _FENCE.search(text)
    if match is None:
        return text.strip()
    return match.group(2).strip()


def _candidates(text: str) -> list[str]:
    """Texts to look for an answer in: each fenced block, then the whole reply."""
    cleaned = remove_think(text)
    found = [m.group(2).strip() for m in _FENCE.finditer(cleaned)]
    outside = _FENCE.sub(" ", cleaned).strip()
    return [c for c in [*found, cleaned, outside] if c]


# --------------------------------------------------------------------------- JSON-ish


_PAIRS = {"[": "]", "{": "}"}


class _Strings:
    """Follows quoted strings (JSON's or Python's quotes, backslash escapes) through a text,
    one character at a time, so that brackets and words inside strings can be ignored."""

    def __init__(self, *, prose_apostrophes: bool = False) -> None:
        self.quote: str | None = None  # the quote of the string we are in, if any
        self._escape = False
        self._prose_apostrophes = prose_apostrophes

    def inside(self, text: str, i: int) -> bool:
        """Take in text[i]; True when it belongs to a string (its quotes included)."""
        ch = text[i]
        if self.quote:
            if self._escape:
                self._escape = False
            elif ch == "\\":
                self._escape = True
            elif ch == self.quote:
                self.quote = None
            return True
        if ch not in "\"'":
            return False
        # with prose_apostrophes, an apostrophe inside a word is prose, not a quote
        if (
            self._prose_apostrophes
            and ch == "'"
            and 0 < i < len(text) - 1
            and text[i - 1].isalnum()
            and text[i + 1].isalnum()
        ):
            return False
        self.quote = ch
        return True


def _scan_balanced(text: str, start: int) -> int | None:
    """Index just past the bracket that closes text[start], or None if it never closes."""
    stack: list[str] = []
    strings = _Strings(prose_apostrophes=True)
    for i in range(start, len(text)):
        if strings.inside(text, i):
            continue
        ch = text[i]
        if ch in _PAIRS:
            stack.append(_PAIRS[ch])
        elif ch in "]}":
            if not stack or stack[-1] != ch:
                return None
            stack.pop()
            if not stack:
                return i + 1
    return None


def _repair_truncated(text: str) -> tuple[str, bool]:
    """Close a JSON value that was cut off; drop a half-written last element.

    Returns (repaired text, whether a partial element was dropped).
    """
    stack: list[str] = []
    strings = _Strings()
    cuts: list[tuple[int, tuple[str, ...]]] = []  # (position of a comma, stack there)
    for i, ch in enumerate(text):
        if strings.inside(text, i):
            continue
        if ch in _PAIRS:
            stack.append(_PAIRS[ch])
            cuts.append((i + 1, tuple(stack)))  # just after an opener: an empty container
        elif ch in "]}":
            if stack:
                stack.pop()
        elif ch == ",":
            cuts.append((i, tuple(stack)))
    body = text.rstrip()
    dropped = False
    if strings.quote or body.endswith(":") or _ends_inside_key(body, stack):
        if not cuts:
            return text, False
        position, closers = cuts[-1]
        body = text[:position].rstrip()
        stack = list(closers)
        dropped = True
    body = body.rstrip().rstrip(",")
    return body + "".join(reversed(stack)), dropped


def _ends_inside_key(body: str, stack: list[str]) -> bool:
    """In an object, a trailing complete string with no ':' after it is a key with no value."""
    if not stack or stack[-1] != "}" or not body.endswith(('"', "'")):
        return False
    tail = body[body.rfind("{") + 1 :]
    last_part = tail.rsplit(",", 1)[-1]
    return ":" not in last_part


def _pythonize(text: str) -> str:
    """JSON literals true/false/null → Python, outside strings, for ast.literal_eval."""
    words = {"true": "True", "false": "False", "null": "None"}
    out: list[str] = []
    word: list[str] = []  # the word being read (starts with a letter, outside strings)
    strings = _Strings()
    for i, ch in enumerate(text):
        if not strings.inside(text, i) and (ch.isalpha() or (word and (ch.isalnum() or ch == "_"))):
            word.append(ch)
            continue
        if word:
            out.append(words.get("".join(word), "".join(word)))
            word = []
        out.append(ch)
    if word:
        out.append(words.get("".join(word), "".join(word)))
    return "".join(out)


def _loads(text: str) -> object:
    """json.loads, else a Python literal (single quotes, trailing commas, True/None)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _python_literal(text)


def _python_literal(text: str) -> object:
    try:
        return ast.literal_eval(_pythonize(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


#: What `_read` returns for a text that is neither JSON nor a Python literal.
_UNREADABLE = object()


def _read(text: str) -> object:
    """`_loads(text)`, or _UNREADABLE."""
    try:
        return _loads(text)
    except ValueError:
        return _UNREADABLE


def _structures(text: str, openers: str = "[{", limit: int = 20) -> list[tuple[object, bool]]:
    """Every list/dict that can be read from `text`: (value, was_repaired_with_a_drop)."""
    found: list[tuple[object, bool]] = []
    starts = [i for i, ch in enumerate(text) if ch in openers][:limit]
    for start in starts:
        end = _scan_balanced(text, start)
        if end is not None:
            piece, dropped = text[start:end], False
        else:
            piece, dropped = _repair_truncated(text[start:])
        value = _read(piece)
        if value is not _UNREADABLE:
            found.append((value, dropped))
    return found


def parse_json(text: str, step: str = "parse_json") -> Any:
    """The first JSON (or Python-literal) list or object in a reply."""
    for candidate in _candidates(text):
        value = _read(candidate)
        if value is not _UNREADABLE:
            return value
        for value, _ in _structures(candidate):
            return value
    raise LLMOutputError(step, text, "no JSON list or object found")


def literal_eval(text: str) -> Any:
    """DeepSearcher-compatible name for `parse_json`."""
    return parse_json(text, step="literal_eval")


# --------------------------------------------------------------------------- lists

_LIST_KEYS = (
    "queries",
    "sub_queries",
    "subqueries",
    "questions",
    "items",
    "list",
    "answer",
    "result",
    "results",
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$")


def _as_string_list(value: object) -> list[str] | None:
    if isinstance(value, dict):
        for key in _LIST_KEYS:
            if isinstance(value.get(key), list):
                return _as_string_list(value[key])
        lists = [v for v in value.values() if isinstance(v, list)]
        if lists:
            return _as_string_list(lists[0])
        # a JSON-mode grammar forces an object: {"query1": "...", "query2": "..."} is the list of its
        # values, and `{}` (a small model's "none" under that grammar) the empty list
        if all(_is_scalar(v) for v in value.values()):
            return [str(v).strip() for v in value.values() if str(v).strip()]
        return None
    if not isinstance(value, (list, tuple)):
        return None
    items: list[str] = []
    for item in value:
        if isinstance(item, (list, tuple)):
            items.extend(str(x).strip() for x in item if x is not None and str(x).strip())
        elif isinstance(item, dict):
            texts = [v for v in item.values() if isinstance(v, str)]
            if texts:
                items.append(texts[0].strip())
        elif item is not None and str(item).strip():
            items.append(str(item).strip())
    return items


def _is_scalar(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _has_strings(value: object) -> bool:
    if isinstance(value, dict):
        if value and all(isinstance(v, str) for v in value.values()):
            return True
        return any(_has_strings(v) for v in value.values() if isinstance(v, list))
    return isinstance(value, (list, tuple)) and any(isinstance(v, str) or _has_strings(v) for v in value)


def parse_list(text: str, step: str = "parse_list") -> list[str]:
    """A list of strings: `["a", "b"]`, also fenced, in prose, single-quoted, with trailing
    commas, inside `{"queries": [...]}`, an object of strings (`{"query1": "a", ...}`, what a
    JSON-mode grammar forces), cut off mid-list, or as bullet/numbered lines."""
    if not isinstance(text, str):
        raise LLMOutputError(step, repr(text), "not text")
    partial_only = False
    for candidate in _candidates(text):
        results = []
        for value, dropped in _structures(candidate):
            items = _as_string_list(value)
            if items is not None:
                results.append((items, dropped, _has_strings(value)))
        if not results:
            continue
        # Prose like "see [1]" also parses as a list: prefer one that holds strings.
        for items, _, has_strings in results:
            if items and has_strings:
                return items
        for items, _, _ in results:
            if items:
                return items
        if any(not dropped for _, dropped, _ in results):
            return []
        partial_only = True
    for candidate in _candidates(text):
        bullets = [m.group(1) for line in candidate.splitlines() if (m := _BULLET.match(line))]
        if bullets:
            return [b.strip().strip("\"'`").strip() for b in bullets]
    reason = "the list was cut off before its first item" if partial_only else "no list found"
    raise LLMOutputError(step, text, reason)


parse_list.format_hint = 'a JSON list of strings and nothing else, e.g. ["first", "second"]'  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- numbers

_BARE_NUMBER = re.compile(r"^[\s\W_]*?(-?\d+)[\s\W_]*$")
_BRACKETED = re.compile(r"\[\s*(-?\d+)\s*\]")
_BOLD = re.compile(r"\*\*\s*\[?\s*(-?\d+)\s*\]?\s*\*\*")
_ANY_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?|\d+")


def parse_number(text: str, step: str = "parse_number") -> int:
    """An integer: a bare number ("10"), else the last [n] or **n**, else the last number.

    "The best agent is [2] because ..." → 2.
    """
    if not isinstance(text, (str, int)) or isinstance(text, bool):
        raise LLMOutputError(step, repr(text), "not text")
    if isinstance(text, int):
        return text
    for candidate in _candidates(text):
        match = _BARE_NUMBER.match(candidate)
        if match:
            return int(match.group(1))
    cleaned = remove_think(text)
    for value, _ in _structures(cleaned, "{"):
        if isinstance(value, dict):
            numbers = [v for v in value.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if len(numbers) == 1:
                return int(numbers[0])
    for pattern in (_BRACKETED, _BOLD):
        hits = pattern.findall(cleaned)
        if hits:
            return int(hits[-1])
    hits = _ANY_NUMBER.findall(cleaned)
    if hits:
        return int(float(hits[-1]))
    raise LLMOutputError(step, text, "no number found")


parse_number.format_hint = "only the number, e.g. 2"  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- yes / no

_YES = {"yes", "y", "true", "relevant"}
_NO = {"no", "n", "false", "irrelevant"}
_YES_NO_WORD = re.compile(r"\b(yes|no|true|false)\b", re.I)
_ANSWER_IS = re.compile(
    r"(?:answer|verdict|decision|result)\s*(?:is|:)\s*\**\s*[\"'`]?(yes|no|true|false)\b",
    re.I,
)


def parse_yes_no(text: str, step: str = "parse_yes_no") -> bool:
    """YES/NO (also true/false, quoted, fenced, in JSON or after prose) → bool."""
    if isinstance(text, bool):
        return text
    if not isinstance(text, str):
        raise LLMOutputError(step, repr(text), "not text")
    for candidate in _candidates(text):
        stripped = candidate.strip().strip("\"'`*.!:[](){} \n").lower()
        first = re.split(r"[\s,.;:!\"'`*]+", stripped, maxsplit=1)[0] if stripped else ""
        if first in _YES:
            return True
        if first in _NO:
            return False
        try:
            value = _loads(candidate)
        except ValueError:
            value = None
        if isinstance(value, dict) and len(value) == 1:
            value = next(iter(value.values()))
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _YES | _NO:
            return value.strip().lower() in _YES
    cleaned = remove_think(text)
    capitals = re.findall(r"\b(YES|NO|TRUE|FALSE)\b", cleaned)
    if capitals:
        return capitals[-1] in ("YES", "TRUE")
    stated = _ANSWER_IS.findall(cleaned)
    if stated:
        return stated[-1].lower() in ("yes", "true")
    words = _YES_NO_WORD.findall(cleaned)
    if words:
        return words[-1].lower() in ("yes", "true")
    raise LLMOutputError(step, text, "expected YES or NO")


parse_yes_no.format_hint = "only YES or NO"  # type: ignore[attr-defined]
