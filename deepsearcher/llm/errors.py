"""Errors of the LLM layer: one line each, naming the provider, model, server and cause."""

from __future__ import annotations

from typing import Any

from deepsearcher.types.errors import MissingAPIKeyError, ProviderError, failure_message

__all__ = ["LLMError", "LLMOutputError", "MissingAPIKeyError", "failure_message", "request_id_of"]


class LLMError(ProviderError):
    """An LLM call failed for good (after the retries that made sense).

    The message is one line: which provider, model and server, and what happened,
    e.g. ``OpenAI call failed (model gpt-4o-mini at https://api.openai.com/v1): 429 Too
    Many Requests after 4 attempts``.
    """

    error_kind = "llm"

    def __init__(
        self,
        provider: str,
        model: str,
        base_url: str | None,
        reason: str,
        *,
        kind: str = "error",
        status: int | None = None,
        attempts: int = 1,
        hint: str = "",
        request_id: str | None = None,
    ) -> None:
        super().__init__(failure_message(f"{provider} call", model, base_url, reason, hint))
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.reason = reason
        self.kind = kind
        self.status = status
        self.attempts = attempts
        #: The server's id of the failed request (SDK `request_id` or x-request-id), for support tickets.
        self.request_id = request_id


def request_id_of(exc: BaseException | None) -> str | None:
    """The request id an SDK exception carries (openai/anthropic `request_id`, else the reply's
    x-request-id header); None when there is none."""
    found = getattr(exc, "request_id", None)
    if found is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
        found = headers.get("x-request-id") if headers is not None and hasattr(headers, "get") else None
    return str(found) if found else None


class LLMOutputError(ProviderError, ValueError):
    """The model's reply could not be read as the format a step asked for (HTTP 502: the
    upstream model, not the client, produced it)."""

    error_kind = "llm_output"

    def __init__(self, step: str, text: str, reason: str = "") -> None:
        text = text if isinstance(text, str) else repr(text)
        start = " ".join(text.split())
        if len(start) > 200:
            start = start[:200] + "…"
        why = f" ({reason})" if reason else ""
        super().__init__(f"Could not parse the LLM output for step '{step}'{why}. The output starts with: {start!r}")
        self.step = step
        self.text = text
        self.reason = reason
        #: Token usage of the calls that produced the bad output (set by structured_call).
        self.usage: Any = None
