"""Fit an answer prompt's passages into a small model's context window.

A local model has a context of a few thousand tokens (`llm.context_window`); thirty 256-token
passages do not fit. The best-ranked passages are kept whole while they fit, the next one is
cut to the room left, the rest dropped, and the step says so (never a silent overflow: the
provider refuses a prompt that still does not fit).
"""

from __future__ import annotations

from typing import Any

from deepsearcher.llm.token_estimate import estimate_tokens

#: Estimates are a character count; a tokenizer may need this much more for the same text.
SAFETY = 1.25
#: Tokens kept for the reply when the provider sets no max_tokens.
DEFAULT_REPLY_TOKENS = 512
#: A passage cut to fewer tokens than this is dropped instead.
MIN_PASSAGE_TOKENS = 48


def _cost(text: str) -> int:
    return int(estimate_tokens(text) * SAFETY) + 1


def room_for_passages(llm: Any, prompt_without_passages: str) -> int | None:
    """Tokens the passages may take in `llm`'s context, or None when it has no small window."""
    window = getattr(llm, "context_window", None)
    if not window:
        return None
    params = getattr(llm, "request_params", {}) or {}
    reply = int(params.get("max_tokens") or DEFAULT_REPLY_TOKENS)
    return max(0, int(window) - reply - _cost(prompt_without_passages) - 16)


def fit_passages(entries: list[str], room: int | None) -> tuple[list[str], int, int]:
    """(the entries that fit in `room` tokens, the last perhaps cut; how many were cut; dropped)."""
    if room is None:
        return entries, 0, 0
    kept: list[str] = []
    left = room
    cut = 0
    for entry in entries:
        cost = _cost(entry) + 2
        if cost <= left:
            kept.append(entry)
            left -= cost
            continue
        if left >= MIN_PASSAGE_TOKENS:
            chars = int((left - 2) / SAFETY * 4)
            kept.append(entry[:chars].rstrip() + " …")
            cut = 1
        break
    return kept, cut, len(entries) - len(kept)
