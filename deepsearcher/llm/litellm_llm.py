"""Any model LiteLLM can reach (extra: litellm): "provider/model" names, keys from its env vars."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.llm.openai_llm import chat_response, stream_items
from deepsearcher.transport.retry import Failure


@register_provider("llm", extra="litellm", requires=("litellm",))
class LiteLLM(BaseLLM):
    """Config: model (e.g. "anthropic/claude-sonnet-4-5", "ollama/llama3.1"), api_key (else
    $LITELLM_API_KEY) and base_url or api_base (else $LITELLM_API_BASE, e.g. a LiteLLM proxy);
    both optional, LiteLLM reads each provider's own env vars. timeout, max_retries,
    max_concurrency; other keys are passed to `litellm.acompletion`, with drop_params=True
    (a parameter the model does not take is dropped, as DeepSearcher did)."""

    supports_json_mode = True

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        api_base: str | None = None,
        **kwargs: Any,
    ) -> None:
        # LiteLLM fetches a price list from the internet at import unless told not to.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        self._litellm = require("litellm", extra="litellm", feature="the LiteLLM provider")
        self._litellm.suppress_debug_info = True  # type: ignore[attr-defined]  # its "Give Feedback" banner on every error
        super().__init__(model, base_url=base_url or api_base or os.environ.get("LITELLM_API_BASE") or None, **kwargs)
        self.api_key = api_key or os.environ.get("LITELLM_API_KEY") or None

    @property
    def api_base(self) -> str | None:
        """DeepSearcher's name of `base_url`."""
        return self.base_url

    def _request(self, messages: list[Message], kwargs: dict[str, object]) -> dict[str, object]:
        request: dict[str, object] = {
            "model": self.model,
            "messages": messages,
            "timeout": self.timeout + 5,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
            **self.request_params,
            **kwargs,
        }
        if self.api_key:
            request["api_key"] = self.api_key
        if self.base_url:
            request["api_base"] = self.base_url
        return request

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        request = self._request(messages, kwargs)
        if json_mode:
            request["response_format"] = {"type": "json_object"}
        return chat_response(self, await self._litellm.acompletion(**request))

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
        request = self._request(messages, kwargs)
        request["stream"] = True
        request.setdefault("stream_options", {"include_usage": True})
        async for item in stream_items(await self._litellm.acompletion(**request)):
            yield item

    def _classify_error(self, exc: BaseException) -> Failure | None:
        litellm = self._litellm
        if isinstance(exc, getattr(litellm, "Timeout", ())):
            return self._timeout_failure()
        status = getattr(exc, "status_code", None)
        text = str(exc).lower()
        if status in (None, 500) and (
            isinstance(exc, getattr(litellm, "APIConnectionError", ()))
            or "connection error" in text
            or "connecterror" in text
        ):
            return self._connection_failure(exc)
        if status == 500 and any(
            sign in text
            for sign in (
                "expecting value",
                "unterminated string",
                "jsondecodeerror",
                "extra data",
            )
        ):
            return self._bad_response_failure(str(exc).rsplit(" - ", 1)[-1])
        if isinstance(status, int) and status >= 400:
            return self._status_failure(status, exc)
        return None
