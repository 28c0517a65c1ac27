"""One LLM round trip whose reply must parse: ask, parse, and on failure ask once more.

Kept apart from `parsing` (pure text in, values out) because it needs the LLM classes,
which themselves use the parsers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from deepsearcher.llm.base import BaseLLM, Usage
from deepsearcher.llm.errors import LLMOutputError
from deepsearcher.types.json import JSONObject

T = TypeVar("T")

__all__ = ["StructuredResult", "structured_call"]


class StructuredResult(NamedTuple):
    """What `structured_call` returns: the parsed value and the usage of all its calls
    (unpack it: ``value, usage = await structured_call(...)``)."""

    value: Any
    usage: Usage


_PARSE_ERRORS = (
    LLMOutputError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    SyntaxError,
)


async def structured_call(
    llm: BaseLLM,
    messages: list[JSONObject],
    parser: Callable[[str], T],
    step: str,
    *,
    json_mode: bool = False,
    format_hint: str | None = None,
    **kwargs: object,
) -> StructuredResult:
    """Ask, parse; if parsing fails, show the model its reply and ask once more for the
    exact format; if that fails too, raise LLMOutputError naming `step`.

    `json_mode` asks the provider for a JSON object where it supports that (a list then
    arrives wrapped in an object, which `parse_list` unwraps).
    """
    messages = list(messages)
    parser = llm.reply_parser(parser)
    use_json = bool(json_mode and getattr(llm, "supports_json_mode", False))
    if use_json and not any("json" in str(m.get("content", "")).lower() for m in messages):
        # OpenAI's JSON mode refuses requests whose messages never mention JSON.
        messages.append({"role": "system", "content": "Respond with a JSON object."})
    response = await llm.achat(messages, json_mode=use_json, **kwargs)
    usage = response.usage
    try:
        return StructuredResult(parser(response.content), usage)
    except _PARSE_ERRORS as exc:
        first_error = exc
    hint = format_hint or getattr(parser, "format_hint", None) or "exactly the format asked for above"
    problem = first_error.reason if isinstance(first_error, LLMOutputError) and first_error.reason else str(first_error)
    repair = messages + [
        {"role": "assistant", "content": response.content},
        {
            "role": "user",
            "content": (
                f"Your reply above could not be read ({problem}). Reply again with {hint}. "
                "No explanation, no code fences."
            ),
        },
    ]
    second = await llm.achat(repair, json_mode=use_json, **kwargs)
    usage = usage + second.usage
    try:
        return StructuredResult(parser(second.content), usage)
    except _PARSE_ERRORS as exc:
        reason = exc.reason if isinstance(exc, LLMOutputError) and exc.reason else str(exc)
        error = LLMOutputError(step, second.content, f"{reason}; also after one repair retry")
        error.usage = usage
        raise error from exc
