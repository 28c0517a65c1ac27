"""Anthropic's Claude models through the official `anthropic` SDK (extra: anthropic)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from deepsearcher.config.api_keys import resolve_api_key
from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.llm._messages import split_system
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.transport.retry import Failure
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

ANTHROPIC_URL = "https://api.anthropic.com"


def to_anthropic(messages: list[Message]) -> tuple[str | None, list[JSONObject]]:
    """(system, messages) for the Messages API: system messages become the `system`
    parameter, turns alternate user/assistant starting with a user turn."""
    system, turns = split_system(messages)
    return system, [{"role": role, "content": text} for role, text in turns]


@register_provider("llm", extra="anthropic", requires=("anthropic",), env_var="ANTHROPIC_API_KEY")
class Anthropic(BaseLLM):
    """Claude. Config: model, api_key (else $ANTHROPIC_API_KEY), base_url (else
    $ANTHROPIC_BASE_URL), max_tokens (default 4096), timeout, max_retries,
    max_concurrency; other keys (temperature, top_p, ...) are sent with every request."""

    supports_json_mode = False

    def __init__(
        self,
        model: str = "claude-sonnet-4-5",
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_tokens: int = 4096,
        **kwargs: Any,
    ) -> None:
        self._sdk = require("anthropic", extra="anthropic", feature="the Anthropic LLM")
        self._api_key = resolve_api_key("Anthropic", api_key, ["ANTHROPIC_API_KEY"])
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
        super().__init__(model, base_url=base_url.rstrip("/"), **kwargs)
        self.max_tokens = max_tokens

    def _make_client(self) -> AsyncAnthropic:
        return self._sdk.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self.timeout + 5,
        )

    def _request(self, messages: list[Message], kwargs: dict[str, object]) -> dict[str, Any]:
        system, turns = to_anthropic(messages)
        params: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            **self.request_params,
            **kwargs,
        }
        params.pop("json_mode", None)
        params.pop("stream_options", None)
        request = {"model": self.model, "messages": turns, **params}
        if system:
            request["system"] = system
        return request

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        reply = await self.client.messages.create(**self._request(messages, kwargs))
        text = "".join(
            getattr(block, "text", "") or "" for block in reply.content if getattr(block, "type", "") == "text"
        )
        usage = getattr(reply, "usage", None)
        return ChatResponse(
            text,
            Usage(
                getattr(usage, "input_tokens", 0) or 0,
                getattr(usage, "output_tokens", 0) or 0,
            ),
            model=getattr(reply, "model", None) or self.model,
            finish_reason=getattr(reply, "stop_reason", None),
        )

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
        stream = await self.client.messages.create(**self._request(messages, kwargs), stream=True)
        input_tokens = output_tokens = 0
        try:
            async for event in stream:
                kind = getattr(event, "type", "")
                if kind == "message_start":
                    usage = getattr(event.message, "usage", None)
                    input_tokens = getattr(usage, "input_tokens", 0) or 0
                    output_tokens = getattr(usage, "output_tokens", 0) or 0
                elif kind == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
                    if event.delta.text:
                        yield event.delta.text
                elif kind == "message_delta":
                    usage = getattr(event, "usage", None)
                    output_tokens = getattr(usage, "output_tokens", None) or output_tokens
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()
        yield Usage(input_tokens, output_tokens)

    def _classify_error(self, exc: BaseException) -> Failure | None:
        return self._classify_stainless(self._sdk, exc)
