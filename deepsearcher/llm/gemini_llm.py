"""Google's Gemini models through the `google-genai` SDK (extra: gemini)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from deepsearcher.config.api_keys import resolve_api_key
from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.llm._messages import split_system
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.transport.retry import Failure
from deepsearcher.types.errors import MissingDependencyError
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from google.genai.types import GenerateContentConfig

GEMINI_URL = "https://generativelanguage.googleapis.com"


def to_gemini(messages: list[Message]) -> tuple[str | None, list[JSONObject]]:
    """(system_instruction, contents): roles 'user'/'model', each with one text part."""
    system, turns = split_system(messages)
    contents: list[JSONObject] = [
        {"role": "model" if role == "assistant" else "user", "parts": [{"text": text}]} for role, text in turns
    ]
    return system, contents


def _usage_of(metadata: object) -> Usage:
    if metadata is None:
        return Usage()
    return Usage(
        getattr(metadata, "prompt_token_count", 0) or 0,
        getattr(metadata, "candidates_token_count", 0) or 0,
        getattr(metadata, "total_token_count", 0) or 0,
    )


@register_provider("llm", extra="gemini", requires=("google.genai",), env_var="GEMINI_API_KEY")
class Gemini(BaseLLM):
    """Gemini. Config: model, api_key (else $GEMINI_API_KEY or $GOOGLE_API_KEY), base_url
    (optional), timeout, max_retries, max_concurrency; other keys (temperature,
    max_output_tokens, ...) go into GenerateContentConfig."""

    supports_json_mode = True

    def __init__(
        self,
        model: str = "gemini-2.5-flash",
        api_key: str | None = None,
        base_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            genai = require("google.genai", extra="gemini", feature="the Gemini LLM")
        except MissingDependencyError:
            raise MissingDependencyError("google-genai", "gemini", "the Gemini LLM") from None
        api_key = resolve_api_key("Gemini", api_key, ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
        super().__init__(model, base_url=base_url or GEMINI_URL, **kwargs)
        self._genai = genai
        self._types = require("google.genai.types", extra="gemini", feature="the Gemini LLM")
        self._errors = require("google.genai.errors", extra="gemini", feature="the Gemini LLM")
        http_options: JSONObject = {"timeout": int((self.timeout + 5) * 1000)}
        if base_url:
            http_options["base_url"] = base_url
        self._client = genai.Client(api_key=api_key, http_options=self._types.HttpOptions(**http_options))

    def _config(self, system: str | None, json_mode: bool, kwargs: dict[str, object]) -> GenerateContentConfig:
        options: dict[str, object] = {**self.request_params, **kwargs}
        options.pop("stream_options", None)
        if "max_tokens" in options:
            options["max_output_tokens"] = options.pop("max_tokens")
        if system:
            options["system_instruction"] = system
        if json_mode:
            options["response_mime_type"] = "application/json"
        return self._types.GenerateContentConfig(**options)

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        system, contents = to_gemini(messages)
        reply = await self._client.aio.models.generate_content(
            model=self.model,
            contents=contents,
            config=self._config(system, json_mode, kwargs),
        )
        return ChatResponse(
            reply.text or "",
            _usage_of(getattr(reply, "usage_metadata", None)),
            model=self.model,
        )

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
        system, contents = to_gemini(messages)
        kwargs.pop("json_mode", None)
        stream = await self._client.aio.models.generate_content_stream(
            model=self.model,
            contents=contents,
            config=self._config(system, False, kwargs),
        )
        usage = Usage()
        async for chunk in stream:
            if getattr(chunk, "usage_metadata", None) is not None:
                usage = _usage_of(chunk.usage_metadata)
            text = getattr(chunk, "text", None)
            if text:
                yield text
        yield usage

    def _classify_error(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, self._errors.APIError):
            code = getattr(exc, "code", None)
            if isinstance(code, int):
                return self._status_failure(code, exc)
        return None
