"""The chat-LLM contract every provider implements, and everything they share.

A provider implements three hooks: `_achat_once` (one request → ChatResponse),
`_astream_once` (one streaming request → text deltas, then a `Usage`) and optionally
`_classify_error` (its SDK's exceptions → `Failure`); one whose async SDK client belongs
to an event loop implements `_make_client` and uses `self.client`. `BaseLLM` wraps them
with the timeout, retries with backoff, the per-instance concurrency limit, call/usage
counters, and sync wrappers that also work inside a running event loop (Jupyter).

A provider's `__init__` takes its own settings and passes every other keyword on to
`BaseLLM.__init__`, which keeps the shared ones (timeout, call_timeout, stream_timeout,
max_retries, max_concurrency, retry_*, max_retry_after, supports_json_mode) and sends
the rest with every request.

Deadlines: `timeout` bounds one attempt (connect to the last byte; for a stream, each
piece), `call_timeout` the whole call with its retries, `stream_timeout` a whole streamed
reply; see `deepsearcher.transport.retry.RetryPolicy`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar, Protocol, TypeVar, cast

from deepsearcher.llm.errors import LLMError, request_id_of
from deepsearcher.llm.parsing import literal_eval as _literal_eval
from deepsearcher.llm.parsing import remove_think as _remove_think
from deepsearcher.llm.token_estimate import estimate_counts
from deepsearcher.transport.retry import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_STREAM_TIMEOUT,
    DEFAULT_TIMEOUT,
    ConcurrencyLimit,
    Failure,
    GiveUp,
    RetryableFailure,
    RetryPolicy,
    call_with_retries,
    final_reason,
    format_seconds,
)
from deepsearcher.transport.retry import timeout_after as _timeout
from deepsearcher.types.errors import MissingAPIKeyError, cause_chain
from deepsearcher.utils.contracts import attached_shapes
from deepsearcher.utils.sync_bridge import iterate_sync, run_sync

logger = logging.getLogger(__name__)

Message = dict[str, Any]
Messages = list[Message] | str

__all__ = ["BaseLLM", "ChatResponse", "LLMStream", "SyncLLMStream", "Usage"]


@dataclass
class Usage:
    """Token counts of one call, or a sum of calls (`a + b`)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    #: True when the API reported none and the counts are estimated from the text (see token_estimate)
    estimated: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        self.prompt_tokens = int(self.prompt_tokens or 0)
        self.completion_tokens = int(self.completion_tokens or 0)
        self.total_tokens = int(self.total_tokens or 0) or self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            estimated=self.estimated or other.estimated,
        )

    def __radd__(self, other: object) -> Usage:
        if other == 0:  # sum([...]) starts from 0
            return self
        return NotImplemented


class ChatResponse:
    """A model's reply: its text and token usage.

    DeepSearcher built `ChatResponse(content, total_tokens)`; both that (an int as the
    second argument or `total_tokens=`) and `ChatResponse(content, Usage(...))` work.
    """

    __slots__ = ("content", "usage", "model", "finish_reason")

    def __init__(
        self,
        content: str,
        usage: Usage | int | None = None,
        *,
        total_tokens: int | None = None,
        model: str | None = None,
        finish_reason: str | None = None,
    ) -> None:
        if isinstance(usage, int) and not isinstance(usage, bool):
            usage = Usage(total_tokens=usage)
        if usage is None:
            usage = Usage(total_tokens=total_tokens or 0)
        self.content = content or ""
        self.usage: Usage = cast(Usage, usage)  # a bool is refused above only as a count, kept as given
        self.model = model
        self.finish_reason = finish_reason

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens

    def __repr__(self) -> str:
        return f"ChatResponse(content={self.content!r}, usage={self.usage!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatResponse) and (self.content, self.usage) == (
            other.content,
            other.usage,
        )


def estimate_usage(messages: list[Message], completion: str) -> Usage:
    """The usage of a call whose reply reported none, estimated from its text (marked `estimated`)."""
    prompt, reply = estimate_counts(messages, completion)
    return Usage(prompt, reply, prompt + reply, estimated=True)


def _normalize_messages(messages: Messages) -> list[Message]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, (list, tuple)) or not messages:
        raise TypeError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts (or a string)")
    result = []
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            raise TypeError(f"each message must be a dict with 'role' and 'content', got {message!r}")
        result.append(message)
    return result


def _sdk_error_detail(exc: BaseException) -> str:
    """The server's own error message from an SDK exception's body, else str(exc)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(getattr(exc, "message", None) or exc)


OnceCall = Callable[..., Awaitable[ChatResponse]]
T = TypeVar("T")


class LLMShape(Protocol):
    """Another contract a chat-model subclass may follow instead of ours (upstream DeepSearcher's
    synchronous `chat`: deepsearcher/llm/_upstream.py), attached from outside this module."""

    def adapt(self, cls: type[BaseLLM]) -> None:
        """Fit a subclass of this shape to our callers (run once, at class creation)."""
        ...

    def routed_call(self, llm: BaseLLM) -> OnceCall | None:
        """Where this instance's requests go instead of its provider's `_achat_once`, or None."""
        ...

    def widen_parser(self, llm: BaseLLM, parser: Callable[[str], T]) -> Callable[[str], T]:
        """`parser`, widened for this model (or `parser` itself)."""
        ...


def _llm_shapes() -> list[LLMShape]:
    return [cast(LLMShape, shape) for shape in attached_shapes("llm")]


class BaseLLM(ABC):
    """A chat model behind one API. Subclasses set `self.model` and `self.base_url`.

    A provider implements `_achat_once`. Subclasses of another shape (upstream DeepSearcher's,
    with only a synchronous `chat(messages) -> ChatResponse`) are fitted by an attached shape
    (deepsearcher/llm/_upstream.py), with the same limits, retries and counters.
    """

    #: The provider's name in messages (defaults to the class name).
    provider_name: ClassVar[str] = ""
    #: Whether `json_mode=True` is passed on to the API (else it is ignored).
    supports_json_mode: bool = False
    #: A whole query's default deadline suited to this model (None: the hosted-API default);
    #: local CPU models set a long one.
    query_timeout_hint: float | None = None
    #: The model's context size in tokens where it is small and known (a local model's n_ctx):
    #: agents fit their passages into it; None: large enough for any prompt of ours.
    context_window: int | None = None
    #: Why this LLM cannot call its API (no key), found when it was made. Raised by its first call,
    #: before any request, and at once by `create_provider` (every config-built LLM: CLI, REST, MCP,
    #: init_config): constructing one directly with no key works, as upstream DeepSearcher's did.
    credentials_error: MissingAPIKeyError | None = None

    model: str
    base_url: str | None

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Let each attached shape fit a subclass written against another contract (upstream's
        `chat`-only classes: deepsearcher/llm/_upstream.py) before ABC checks what it lacks."""
        super().__init_subclass__(**kwargs)
        for shape in _llm_shapes():
            shape.adapt(cls)

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        max_concurrency: int = 8,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 20.0,
        max_retry_after: float = 120.0,
        supports_json_mode: bool | None = None,
        call_timeout: float | None = None,
        stream_timeout: float = DEFAULT_STREAM_TIMEOUT,
        **request_params: object,
    ) -> None:
        model = getattr(self, "model", "") if model is None else model  # DeepSearcher's BaseLLM() took no model
        limits = {
            "timeout": timeout,
            "stream_timeout": stream_timeout,
            "call_timeout": call_timeout or 1,
        }
        for label, value in limits.items():
            if value is None or float(value) <= 0:
                raise ValueError(f"{label} must be a positive number of seconds, got {value!r}")
        if int(max_retries) < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries!r}")
        self.model = model
        self.base_url = base_url
        self.policy = RetryPolicy(
            max_retries=int(max_retries),
            timeout=float(timeout),
            base_delay=float(retry_base_delay),
            max_delay=float(retry_max_delay),
            max_retry_after=float(max_retry_after),
            # A longer per-attempt timeout than the default budget widens the budget with it.
            call_timeout=float(call_timeout) if call_timeout is not None else max(DEFAULT_CALL_TIMEOUT, float(timeout)),
            stream_timeout=float(stream_timeout),
        )
        self.limit = ConcurrencyLimit(int(max_concurrency))
        if supports_json_mode is not None:
            self.supports_json_mode = bool(supports_json_mode)
        #: Sent with every request (temperature, max_tokens, ...); per-call kwargs win.
        self.request_params: dict[str, object] = request_params
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._stats_lock = threading.Lock()
        self.calls = 0
        self.failed_calls = 0
        self.retries = 0
        self.usage_total = Usage()

    # ------------------------------------------------------------------ settings

    @property
    def name(self) -> str:
        return self.provider_name or type(self).__name__

    @property
    def timeout(self) -> float:
        return self.policy.timeout

    @property
    def max_retries(self) -> int:
        return self.policy.max_retries

    @property
    def max_concurrency(self) -> int:
        return self.limit.limit

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where})"

    # ------------------------------------------------------------------ provider hooks

    @abstractmethod
    async def _achat_once(self, messages: list[Message], *, json_mode: bool = False, **kwargs: Any) -> ChatResponse:
        """One request, no retries: the reply and its usage."""

    def _routed_call(self) -> OnceCall | None:
        """The one-request call an attached shape routes this instance's calls to (upstream's users
        replace `llm.chat` on the instance), else None."""
        for shape in _llm_shapes():
            routed = shape.routed_call(self)
            if routed is not None:
                return routed
        return None

    def _once(self) -> OnceCall:
        """The one-request coroutine function: a routed call, else the provider's."""
        return self._routed_call() or self._achat_once

    def reply_parser(self, parser: Callable[[str], T]) -> Callable[[str], T]:
        """`parser` as the structured steps use it with this model (an attached shape may widen it:
        upstream's users give their model its own `literal_eval`)."""
        for shape in _llm_shapes():
            parser = shape.widen_parser(self, parser)
        return parser

    async def _astream_once(self, messages: list[Message], **kwargs: object) -> AsyncIterator[str | Usage]:
        """One streaming request: yield text deltas, and a `Usage` when the API reports it.

        The default makes one non-streaming call (for providers without streaming).
        """
        response = await self._once()(messages, **kwargs)
        yield response.content
        yield response.usage

    def _classify_error(self, exc: BaseException) -> Failure | None:
        """Map the SDK's exception to a Failure; None leaves it to the generic rules."""
        return None

    def _make_client(self) -> object:
        """A new SDK client, for providers that use `self.client`."""
        raise NotImplementedError(f"{type(self).__name__} has no per-loop SDK client")

    def require_credentials(self) -> None:
        """Raise `credentials_error` (the missing key, named as at construction) if there is one."""
        if self.credentials_error is not None:
            raise self.credentials_error.with_traceback(None)

    # ------------------------------------------------------------------ SDK client

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

    # ------------------------------------------------------------------ errors

    def _classify(self, exc: BaseException) -> Failure:
        if isinstance(exc, RetryableFailure):
            return exc.failure
        try:
            failure = self._classify_error(exc)
        except Exception as bug:  # noqa: BLE001 - an SDK whose errors look unexpected: use the generic rules
            logger.debug(
                "%s: could not classify %r (%r); using the generic rules",
                self.name,
                exc,
                bug,
            )
            failure = None
        if failure is not None:
            return failure
        return self._generic_failure(exc)

    def _timeout_failure(self) -> Failure:
        return Failure("timeout", f"timed out after {format_seconds(self.timeout)} s", True)

    def _connection_failure(self, exc: BaseException) -> Failure:
        """'connection refused at URL', 'server closed the connection', ... from any chain."""
        where = self.base_url or "the server"
        chain = cause_chain(exc)
        texts = " | ".join(str(e) for e in chain).lower()
        if any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in texts:
            reason = f"connection refused at {where} (is the server running?)"
        elif "disconnected" in texts or "without sending" in texts or "incomplete" in texts or "peer closed" in texts:
            reason = f"the server at {where} closed the connection before the reply was complete"
        elif "name or service not known" in texts or "nodename nor servname" in texts or "getaddrinfo" in texts:
            reason = f"cannot resolve the host of {where}"
        else:
            detail = next((str(e) for e in reversed(chain) if str(e)), type(exc).__name__)
            reason = f"cannot connect to {where}: {' '.join(detail.split())[:160]}"
        return Failure("connection", reason, True)

    def _generic_failure(self, exc: BaseException) -> Failure:
        import httpx  # core dependency

        if isinstance(exc, (asyncio.TimeoutError, TimeoutError, httpx.TimeoutException)):
            return self._timeout_failure()
        if isinstance(exc, httpx.HTTPStatusError):
            return Failure.from_status(exc.response.status_code, exc.response.text, exc.response.headers)
        if isinstance(exc, (httpx.TransportError, ConnectionError)):
            return self._connection_failure(exc)
        if isinstance(exc, json.JSONDecodeError):
            return self._bad_response_failure(str(exc))
        if isinstance(exc, OSError):
            return self._connection_failure(exc)
        detail = " ".join(str(exc).split())[:200]
        return Failure(
            "fatal",
            f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__,
            False,
        )

    def _classify_stainless(self, sdk: ModuleType, exc: BaseException) -> Failure | None:
        """Errors of the openai and anthropic SDKs (same generator, same exception tree)."""
        if isinstance(exc, sdk.APITimeoutError):
            return self._timeout_failure()
        if isinstance(exc, sdk.APIConnectionError):
            return self._connection_failure(exc)
        if isinstance(exc, sdk.APIStatusError):
            return self._status_failure(exc.status_code, exc)
        validation = getattr(sdk, "APIResponseValidationError", None)
        if validation is not None and isinstance(exc, validation):
            return self._bad_response_failure(str(exc))
        return None

    def _status_failure(self, status: int, exc: BaseException) -> Failure:
        """An SDK exception that carries the HTTP status of the reply (and its Retry-After)."""
        response = getattr(exc, "response", None)
        return Failure.from_status(status, _sdk_error_detail(exc), getattr(response, "headers", None))

    def _bad_response_failure(self, detail: str) -> Failure:
        detail = " ".join(str(detail).split())[:120]
        return Failure("bad_response", f"the reply is not a valid chat completion ({detail})", True)

    def _error(self, give_up: GiveUp, cause: BaseException | None = None) -> LLMError:
        """The LLMError for a call given up; `cause` (default: the GiveUp's) gives its request id."""
        failure = give_up.failure
        return LLMError(
            self.name,
            self.model,
            self.base_url,
            give_up.reason,
            kind=failure.kind,
            status=failure.status,
            attempts=give_up.attempts,
            hint=failure.hint,
            request_id=request_id_of(cause or give_up.__cause__),
        )

    def _on_retry(self, failure: Failure, delay: float) -> None:
        with self._stats_lock:
            self.retries += 1

    def _record(self, usage: Usage | None) -> None:
        with self._stats_lock:
            self.calls += 1
            if usage is not None:
                self.usage_total = self.usage_total + usage

    def reset_stats(self) -> None:
        """Zero `calls`, `failed_calls`, `retries` and `usage_total`."""
        with self._stats_lock:
            self.calls = self.failed_calls = self.retries = 0
            self.usage_total = Usage()

    # ------------------------------------------------------------------ async API

    async def achat(self, messages: Messages, *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        """Send `messages`, return the reply. Retries, timeout and the concurrency limit apply.

        `json_mode` asks for a JSON object where the provider supports it; extra keyword
        arguments (temperature, max_tokens, ...) go to the API.
        """
        self.require_credentials()
        msgs = _normalize_messages(messages)
        use_json = bool(json_mode and self.supports_json_mode)

        async def attempt() -> ChatResponse:
            return await self._once()(msgs, json_mode=use_json, **kwargs)

        async with self.limit:
            try:
                response = await call_with_retries(attempt, self._classify, self.policy, self._on_retry)
            except GiveUp as give_up:
                with self._stats_lock:
                    self.failed_calls += 1
                raise self._error(give_up) from give_up.__cause__  # the SDK's own exception, for debugging
        if not response.usage.total_tokens and response.content:
            response.usage = estimate_usage(msgs, response.content)
        self._record(response.usage)
        return response

    def astream(self, messages: Messages, **kwargs: object) -> LLMStream:
        """Stream the reply: `async for delta in llm.astream(msgs)`; afterwards the
        stream's `.content`, `.usage` and `.response` hold the whole reply.

        Failures before the first token are retried like `achat`; after it they raise LLMError.
        """
        self.require_credentials()
        return LLMStream(self, _normalize_messages(messages), kwargs)

    async def _stream_deltas(
        self, messages: list[Message], result: LLMStream, kwargs: dict[str, object]
    ) -> AsyncIterator[str]:
        """The stream, with deadlines: each piece within `timeout`, the first within the
        call budget (retries included), the whole reply within `stream_timeout`."""
        await self.limit.acquire()
        try:
            attempts = 0
            budget = self.policy.budget()
            stream_end = time.monotonic() + self.policy.stream_timeout
            while True:
                attempts += 1
                emitted = 0
                source = (
                    BaseLLM._astream_once(self, messages, **kwargs)
                    if self._routed_call()
                    else self._astream_once(messages, **kwargs)
                )
                try:
                    while True:
                        left = stream_end - time.monotonic() if emitted else budget.left()
                        wait = max(0.001, min(self.timeout, left))
                        try:
                            async with _timeout(wait):
                                item = await source.__anext__()
                        except StopAsyncIteration:
                            break
                        except (asyncio.TimeoutError, TimeoutError):
                            raise RetryableFailure(self._stream_timeout_failure(emitted, wait, left)) from None
                        if isinstance(item, Usage):
                            result.usage = item
                        elif item:
                            emitted += 1
                            result._parts.append(item)
                            yield item
                    break
                except (asyncio.CancelledError, GeneratorExit):
                    raise
                except Exception as exc:  # noqa: BLE001 - classified below
                    failure = self._classify(exc)
                    if emitted:
                        with self._stats_lock:
                            self.failed_calls += 1
                        raise LLMError(
                            self.name,
                            self.model,
                            self.base_url,
                            f"stream interrupted after {emitted} chunks: {failure.reason}",
                            kind=failure.kind,
                            status=failure.status,
                            attempts=attempts,
                            request_id=request_id_of(exc),
                        ) from exc
                    if not failure.retryable or attempts > self.policy.max_retries:
                        with self._stats_lock:
                            self.failed_calls += 1
                        raise self._error(
                            GiveUp(
                                failure,
                                attempts,
                                final_reason(failure, attempts, self.policy),
                            ),
                            cause=exc,
                        ) from exc
                    delay = self.policy.backoff(attempts - 1, failure.retry_after)
                    if not budget.fits(delay):
                        with self._stats_lock:
                            self.failed_calls += 1
                        raise self._error(
                            GiveUp(
                                failure,
                                attempts,
                                budget.spent_reason(failure, attempts),
                            ),
                            cause=exc,
                        ) from exc
                    self._on_retry(failure, delay)
                    await asyncio.sleep(delay)
                finally:
                    try:
                        await cast(Any, source).aclose()  # an async generator underneath
                    except Exception as exc:  # noqa: BLE001 - the call's own outcome (above) is what counts
                        logger.debug("%s: closing the stream failed: %r", self.name, exc)
            result.done = True
            if not result.usage.total_tokens and result._parts:  # llama.cpp's server ignores include_usage
                result.usage = estimate_usage(messages, result.content)
            self._record(result.usage)
        finally:
            self.limit.release()

    def _stream_timeout_failure(self, emitted: int, wait: float, left: float) -> Failure:
        if emitted and left <= wait:
            reason = f"the whole reply took longer than {format_seconds(self.policy.stream_timeout)} s (stream_timeout)"
        elif emitted:
            reason = f"no new text for {format_seconds(round(wait, 3))} s"
        else:
            reason = f"timed out after {format_seconds(round(wait, 3))} s"
        return Failure("timeout", reason, True)

    # ------------------------------------------------------------------ sync API

    def chat(self, messages: Messages, *, json_mode: bool = False, **kwargs: object) -> ChatResponse:
        """Blocking `achat` (DeepSearcher's name). Works inside a running event loop too."""
        return run_sync(self.achat(messages, json_mode=json_mode, **kwargs))

    def stream(self, messages: Messages, **kwargs: object) -> SyncLLMStream:
        """Blocking `astream`: `for delta in llm.stream(msgs)`; then `.content`, `.usage`."""
        return SyncLLMStream(self.astream(messages, **kwargs))

    # ------------------------------------------------------------------ helpers

    remove_think = staticmethod(_remove_think)
    literal_eval = staticmethod(_literal_eval)


class LLMStream:
    """Async iterator of text deltas from `BaseLLM.astream`.

    After the iteration ends: `content` (the whole text), `usage` (as the API reported
    it; zeros if it reported none), `response` (a ChatResponse). Use `async with` or
    `await stream.aclose()` when stopping early, so the concurrency slot is freed at once.
    """

    def __init__(self, llm: BaseLLM, messages: list[Message], kwargs: dict[str, object]) -> None:
        self.llm = llm
        self.usage = Usage()
        self.done = False
        self._parts: list[str] = []
        self._deltas = llm._stream_deltas(messages, self, kwargs)

    @property
    def content(self) -> str:
        return "".join(self._parts)

    @property
    def response(self) -> ChatResponse:
        return ChatResponse(self.content, self.usage, model=self.llm.model)

    def __aiter__(self) -> LLMStream:
        return self

    async def __anext__(self) -> str:
        return await self._deltas.__anext__()

    async def collect(self) -> ChatResponse:
        """Consume the rest of the stream and return the whole reply."""
        async for _ in self:
            pass
        return self.response

    async def aclose(self) -> None:
        await cast(Any, self._deltas).aclose()  # an async generator underneath

    async def __aenter__(self) -> LLMStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class SyncLLMStream:
    """Iterator of text deltas from `BaseLLM.stream`; `content`/`usage`/`response` as LLMStream."""

    def __init__(self, stream: LLMStream) -> None:
        self._stream = stream
        self._iterator = iterate_sync(stream)

    def __iter__(self) -> Iterator[str]:
        return self._iterator

    def __next__(self) -> str:
        return next(self._iterator)

    @property
    def content(self) -> str:
        return self._stream.content

    @property
    def usage(self) -> Usage:
        return self._stream.usage

    @property
    def done(self) -> bool:
        return self._stream.done

    @property
    def response(self) -> ChatResponse:
        return self._stream.response

    def close(self) -> None:
        run_sync(self._stream.aclose())

    def __enter__(self) -> SyncLLMStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
