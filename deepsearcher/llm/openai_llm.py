"""OpenAI, and the base of every OpenAI-compatible provider (DeepSeek, Ollama, vLLM, ...)."""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import Any, AsyncIterator, ClassVar, Union

from deepsearcher.config.registry import register_provider
from deepsearcher.llm._retry import Failure, RetryableFailure
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.llm.errors import MissingAPIKeyError

OPENAI_URL = "https://api.openai.com/v1"
LOCAL_SERVER_HINT = (
    "To use a local model without a key, point provide_settings.llm.config.base_url at an "
    "OpenAI-compatible server: Ollama http://localhost:11434/v1, llama.cpp's llama-server "
    "http://localhost:8080/v1, vLLM http://localhost:8000/v1 (or use provider Ollama / OpenAICompatible)."
)

#: Config keys that configure the SDK client; every other extra key is sent with each request.
CLIENT_OPTIONS = frozenset({"organization", "project", "default_headers", "default_query", "http_client"})


def _usage_of(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(
        getattr(usage, "prompt_tokens", 0) or 0,
        getattr(usage, "completion_tokens", 0) or 0,
        getattr(usage, "total_tokens", 0) or 0,
    )


@register_provider("llm", env_var="OPENAI_API_KEY")
class OpenAI(BaseLLM):
    """OpenAI's chat completions API through the official `openai` SDK.

    Config: model, api_key (else $OPENAI_API_KEY), base_url (else $OPENAI_BASE_URL),
    timeout, max_retries, max_concurrency, supports_json_mode, stream_usage; any other key
    (temperature, max_tokens, top_p, reasoning_effort, ...) is sent with every request.
    """

    default_model: ClassVar[str] = "gpt-4o-mini"
    default_base_url: ClassVar[str | None] = None
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    base_url_env: ClassVar[tuple[str, ...]] = ("OPENAI_BASE_URL",)
    #: True: a key is always needed; False: never; None: needed only for api.openai.com.
    requires_api_key: ClassVar[bool | None] = None
    supports_json_mode = True

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_concurrency: int = 8,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 20.0,
        max_retry_after: float = 120.0,
        supports_json_mode: bool | None = None,
        stream_usage: bool = True,
        **kwargs: Any,
    ) -> None:
        import openai  # a core dependency, imported here to keep `import deepsearcher` light

        self._sdk = openai
        base_url = self._resolve_base_url(base_url)
        api_key = api_key or (os.environ.get(self.api_key_env) if self.api_key_env else None) or None
        if not api_key:
            if self._key_required(base_url):
                raise MissingAPIKeyError(self.name_for_class(), self.api_key_env, self._missing_key_hint())
            api_key = "not-needed"  # local servers ignore it; the SDK insists on one
        super().__init__(
            model or self.default_model,
            base_url=(base_url or OPENAI_URL).rstrip("/"),
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            retry_base_delay=retry_base_delay,
            retry_max_delay=retry_max_delay,
            max_retry_after=max_retry_after,
        )
        if supports_json_mode is not None:
            self.supports_json_mode = bool(supports_json_mode)
        self.stream_usage = stream_usage
        self._api_key = api_key
        self._client_options = {key: kwargs.pop(key) for key in list(kwargs) if key in CLIENT_OPTIONS}
        #: Sent with every request (temperature, max_tokens, ...); per-call kwargs win.
        self.request_params: dict[str, Any] = kwargs
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ configuration hooks

    @classmethod
    def name_for_class(cls) -> str:
        return cls.provider_name or cls.__name__

    def _resolve_base_url(self, base_url: str | None) -> str | None:
        if base_url:
            return base_url
        for name in self.base_url_env:
            if os.environ.get(name):
                return os.environ[name]
        return self.default_base_url

    def _key_required(self, base_url: str | None) -> bool:
        if self.requires_api_key is not None:
            return self.requires_api_key
        return base_url is None or "api.openai.com" in base_url

    def _missing_key_hint(self) -> str:
        return LOCAL_SERVER_HINT if type(self) is OpenAI else ""

    def _make_client(self) -> Any:
        return self._sdk.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=0,  # retries are ours (deepsearcher.llm._retry), the same for every provider
            timeout=self.timeout + 5,  # a backstop: our own per-attempt timeout fires first
            **self._client_options,
        )

    @property
    def client(self) -> Any:
        """The SDK client for the running event loop (httpx pools belong to one loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._make_client()
        return client

    async def aclose(self) -> None:
        """Close the SDK client of the running loop (optional; they are also collected)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    # ------------------------------------------------------------------ calls

    def _params(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        params = dict(self.request_params)
        params.update(kwargs)
        return params

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: Any) -> ChatResponse:
        params = self._params(kwargs)
        if json_mode:
            params["response_format"] = {"type": "json_object"}
        completion = await self.client.chat.completions.create(model=self.model, messages=messages, **params)
        choices = getattr(completion, "choices", None)
        if not choices:
            if isinstance(completion, (str, bytes)):
                raise RetryableFailure(self._bad_response_failure(repr(completion[:80])))
            raise RetryableFailure(self._bad_response_failure("no choices in the reply"))
        choice = choices[0]
        content = getattr(choice.message, "content", None) or ""
        return ChatResponse(
            content,
            _usage_of(getattr(completion, "usage", None)),
            model=getattr(completion, "model", None) or self.model,
            finish_reason=getattr(choice, "finish_reason", None),
        )

    async def _astream_once(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[Union[str, Usage]]:
        params = self._params(kwargs)
        params.pop("json_mode", None)
        params["stream"] = True
        if self.stream_usage:
            params.setdefault("stream_options", {"include_usage": True})
        stream = await self.client.chat.completions.create(model=self.model, messages=messages, **params)
        try:
            async for chunk in stream:
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    yield _usage_of(usage)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(getattr(choice, "delta", None), "content", None)
                    if delta:
                        yield delta
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()

    def _classify_error(self, exc: BaseException) -> Failure | None:
        return self._classify_stainless(self._sdk, exc)
