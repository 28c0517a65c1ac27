"""OpenAI, and the base of every OpenAI-compatible provider (DeepSeek, Ollama, vLLM, ...)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, ClassVar

from deepsearcher.config.api_keys import resolve_api_key
from deepsearcher.config.registry import register_provider
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.llm.local_servers import LOCAL_LIMITS, LOCAL_QUERY_TIMEOUT, detect_local_server
from deepsearcher.transport.retry import Failure, RetryableFailure
from deepsearcher.types.errors import MissingAPIKeyError

if TYPE_CHECKING:
    from openai import AsyncOpenAI

OPENAI_URL = "https://api.openai.com/v1"
LOCAL_SERVER_HINT = (
    "To use a local model without a key, point provide_settings.llm.config.base_url at an "
    "OpenAI-compatible server: Ollama http://localhost:11434/v1, llama.cpp's llama-server "
    "http://localhost:8080/v1, vLLM http://localhost:8000/v1 (or use provider Ollama / OpenAICompatible)."
)

#: Config keys that configure the SDK client; every other extra key is sent with each request.
CLIENT_OPTIONS = frozenset({"organization", "project", "default_headers", "default_query", "http_client"})


def usage_of(usage: object) -> Usage:
    """The `usage` of an OpenAI-shaped reply or chunk (an object or a dict)."""
    if usage is None:
        return Usage()
    if isinstance(usage, dict):
        return Usage(
            usage.get("prompt_tokens", 0),
            usage.get("completion_tokens", 0),
            usage.get("total_tokens", 0),
        )
    return Usage(
        getattr(usage, "prompt_tokens", 0),
        getattr(usage, "completion_tokens", 0),
        getattr(usage, "total_tokens", 0),
    )


def chat_response(llm: BaseLLM, completion: object) -> ChatResponse:
    """The ChatResponse of an OpenAI-shaped chat completion (the openai SDK's, LiteLLM's)."""
    choices = getattr(completion, "choices", None)
    if not choices:
        if isinstance(completion, (str, bytes)):
            raise RetryableFailure(llm._bad_response_failure(repr(completion[:80])))
        raise RetryableFailure(llm._bad_response_failure("no choices in the reply"))
    choice = choices[0]
    return ChatResponse(
        getattr(getattr(choice, "message", None), "content", None) or "",
        usage_of(getattr(completion, "usage", None)),
        model=getattr(completion, "model", None) or llm.model,
        finish_reason=getattr(choice, "finish_reason", None),
    )


async def stream_items(stream: AsyncIterator[object]) -> AsyncIterator[str | Usage]:
    """Text deltas and usage of an OpenAI-shaped stream of chat completion chunks."""
    async for chunk in stream:
        usage = getattr(chunk, "usage", None)
        if usage:
            yield usage_of(usage)
        for choice in getattr(chunk, "choices", None) or []:
            delta = getattr(getattr(choice, "delta", None), "content", None)
            if delta:
                yield delta


@register_provider("llm", env_var="OPENAI_API_KEY")
class OpenAI(BaseLLM):
    """OpenAI's chat completions API through the official `openai` SDK.

    Config: model, api_key (else $OPENAI_API_KEY), base_url (else $OPENAI_BASE_URL),
    timeout, max_retries, max_concurrency, supports_json_mode, stream_usage, local_server
    (a base_url on Ollama's, llama.cpp's, LM Studio's or vLLM's port, or `local_server: llama.cpp`,
    starts from one-slot limits, see deepsearcher/llm/local_servers.py; false: never); any other key
    (temperature, max_tokens, top_p, reasoning_effort, ...) is sent with every request.
    """

    default_model: ClassVar[str] = "gpt-4o-mini"
    default_base_url: ClassVar[str | None] = None
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    #: Other variables tried for the key, after `api_key_env` (older names of it).
    api_key_fallback_env: ClassVar[tuple[str, ...]] = ()
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
        stream_usage: bool = True,
        local_server: str | bool | None = None,
        **kwargs: Any,
    ) -> None:
        import openai  # a core dependency, imported here to keep `import deepsearcher` light

        self._sdk = openai
        base_url = self._resolve_base_url(base_url)
        #: "Ollama", "llama.cpp", ... when base_url is a local server: it starts from one-slot limits
        self.local_server = detect_local_server(base_url, self._local_server_default(local_server))
        if self.local_server is not None:
            for key, value in LOCAL_LIMITS.items():
                kwargs.setdefault(key, value)
            self.query_timeout_hint = LOCAL_QUERY_TIMEOUT
        try:
            api_key = resolve_api_key(
                self.name_for_class(),
                api_key,
                [self.api_key_env, *self.api_key_fallback_env],
                required=self._key_required(base_url),
                extra_hint=self._missing_key_hint(),
            )
        except MissingAPIKeyError as missing:
            # Raised by the first call and by create_provider (see BaseLLM.credentials_error).
            api_key, self.credentials_error = None, missing
        self._api_key = api_key or "not-needed"  # local servers ignore it; the SDK insists on one
        self._client_options = {key: kwargs.pop(key) for key in list(kwargs) if key in CLIENT_OPTIONS}
        super().__init__(
            model or self.default_model,
            base_url=(base_url or OPENAI_URL).rstrip("/"),
            **kwargs,
        )
        self.stream_usage = stream_usage

    # ------------------------------------------------------------------ configuration hooks

    @classmethod
    def request_parameters(cls) -> frozenset[str]:
        """The keys a config may send with every request: what the SDK's `chat.completions.create`
        takes (a vendor's own go under `extra_body`) and the client's options; any other key is a typo."""
        import inspect

        from openai.resources.chat.completions import AsyncCompletions

        taken = set(inspect.signature(AsyncCompletions.create).parameters) - {"self", "model", "messages", "stream"}
        return frozenset(taken | set(CLIENT_OPTIONS))

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

    def _local_server_default(self, given: str | bool | None) -> str | bool | None:
        """The config's `local_server`; providers that are always local (Ollama) name themselves."""
        return given

    def _key_required(self, base_url: str | None) -> bool:
        if self.requires_api_key is not None:
            return self.requires_api_key
        return base_url is None or "api.openai.com" in base_url

    def _missing_key_hint(self) -> str:
        return LOCAL_SERVER_HINT if type(self) is OpenAI else ""

    def _make_client(self) -> AsyncOpenAI:
        return self._sdk.AsyncOpenAI(
            api_key=self._api_key,
            base_url=self.base_url,
            max_retries=0,  # retries are ours (deepsearcher.transport.retry), the same for every provider
            timeout=self.timeout + 5,  # a backstop: our own per-attempt timeout fires first
            **self._client_options,
        )

    # ------------------------------------------------------------------ calls

    def _params(self, kwargs: dict[str, object]) -> dict[str, Any]:
        params = dict(self.request_params)
        params.update(kwargs)
        return params

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        params = self._params(kwargs)
        if json_mode:
            params["response_format"] = {"type": "json_object"}
        completion = await self.client.chat.completions.create(model=self.model, messages=messages, **params)
        return chat_response(self, completion)

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
        params = self._params(kwargs)
        params.pop("json_mode", None)
        params["stream"] = True
        if self.stream_usage:
            params.setdefault("stream_options", {"include_usage": True})
        stream = await self.client.chat.completions.create(model=self.model, messages=messages, **params)
        try:
            async for item in stream_items(stream):
                yield item
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                await close()

    def _classify_error(self, exc: BaseException) -> Failure | None:
        return self._classify_stainless(self._sdk, exc)
