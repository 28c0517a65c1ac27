"""The one place where provider calls (LLM, embedding, crawler, hosted loaders) get their
timeout, retries and concurrency limit.

Every provider turns its SDK's exceptions into a `Failure` (see `BaseLLM._classify_error`)
and the loop here decides: retry with exponential backoff and jitter (honouring a
server's Retry-After), or give up (`GiveUp`, which the caller turns into its one-line
`LLMError` or `EmbeddingError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}

#: Statuses worth another try: rate limits, server errors, request timeouts, conflicts.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))


def status_text(status: int) -> str:
    """'429 Too Many Requests' for 429."""
    reason = _REASONS.get(status, "")
    return f"{status} {reason}".strip()


@dataclass
class Failure:
    """What went wrong in one attempt, as the retry loop needs to know it.

    kind: "status" (an HTTP error status), "timeout", "connection", "bad_response"
    (the server answered something that is not a valid reply), or "fatal".
    """

    kind: str
    reason: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    hint: str = ""

    @classmethod
    def from_status(cls, status: int, detail: str = "", headers: Mapping[str, str] | None = None) -> Failure:
        reason = status_text(status)
        if detail and status not in RETRYABLE_STATUSES:
            reason = f"{reason}: {_shorten(detail)}"
        hint = ""
        if status in (401, 403):
            hint = "Check the API key or credentials (and that they belong to this server)"
        elif status == 404:
            hint = "Check base_url and the model name"
        return cls(
            kind="status",
            reason=reason,
            retryable=status in RETRYABLE_STATUSES,
            status=status,
            retry_after=retry_after_from_headers(headers) if headers is not None else None,
            hint=hint,
        )


class RetryableFailure(Exception):
    """Raised by provider code that detects a failure itself (e.g. an empty stream)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if value is None:
        return None
    value = str(value).strip()
    if not value:
        return None
    seconds = _as_float(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_after_from_headers(headers: Mapping[str, str] | None) -> float | None:
    """Retry-After from response headers ('retry-after-ms' first, as OpenAI sends both)."""
    if not headers or not hasattr(headers, "get"):
        return None
    ms = _as_float(headers.get("retry-after-ms"))
    if ms is not None:
        return max(0.0, ms / 1000.0)
    return parse_retry_after(headers.get("retry-after"))


def _as_float(value: Any) -> float | None:
    """`value` as a number; None when it is missing or not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


if sys.version_info >= (3, 11):
    timeout_after = asyncio.timeout
else:  # pragma: no cover - Python 3.10

    @contextlib.asynccontextmanager
    async def timeout_after(seconds: float) -> AsyncIterator[None]:  # type: ignore[no-redef]
        """asyncio.timeout for Python 3.10: cancel the current task after `seconds`."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None, "timeout_after runs inside a task"
        fired = False

        def fire() -> None:
            nonlocal fired
            fired = True
            task.cancel()

        handle = loop.call_later(seconds, fire)
        try:
            yield
        except asyncio.CancelledError:
            if fired:
                raise asyncio.TimeoutError() from None
            raise
        finally:
            handle.cancel()


def format_seconds(seconds: float) -> str:
    return f"{seconds:g}"


#: Defaults chosen so a server that accepts connections and never answers fails a call
#: (and so the query that needs it) in 40 s: one 30 s attempt and what is left of the budget.
DEFAULT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 40.0
#: A streamed reply may take this long in all (a model dripping tokens forever must end).
DEFAULT_STREAM_TIMEOUT = 180.0


@dataclass
class RetryPolicy:
    """How often and how long to retry; shared by every provider.

    timeout: one attempt, connect to the whole response (for a stream: the wait for any
    one piece of it). call_timeout: the whole call, retries and back-off included; a
    retry that cannot fit is not started. stream_timeout: a whole streamed reply.
    """

    max_retries: int = 3
    timeout: float = DEFAULT_TIMEOUT
    base_delay: float = 0.5
    max_delay: float = 20.0
    #: A Retry-After longer than this is not waited for: the call fails at once.
    max_retry_after: float = 120.0
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    stream_timeout: float = DEFAULT_STREAM_TIMEOUT

    def budget(self) -> Budget:
        return Budget(self.call_timeout)

    def backoff(self, retry_index: int, retry_after: float | None = None) -> float:
        """Delay before retry number `retry_index` (0-based)."""
        if retry_after is not None:
            # Honour the server, plus a little jitter so parallel callers don't stampede.
            return retry_after + random.uniform(0, min(0.25, self.base_delay))
        ceiling = min(self.max_delay, self.base_delay * (2**retry_index))
        return random.uniform(ceiling / 2, ceiling)


class Budget:
    """The time left of one call's `call_timeout`, measured on the monotonic clock."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def attempt_timeout(self, timeout: float) -> float:
        """The timeout of the next attempt: `timeout`, cut to what is left."""
        return max(0.001, min(timeout, self.left()))

    def fits(self, delay: float) -> bool:
        """Whether waiting `delay` still leaves a useful attempt (at least 0.1 s)."""
        return delay + 0.1 < self.left()

    def spent_reason(self, failure: Failure, attempts: int) -> str:
        noun = "attempt" if attempts == 1 else "attempts"
        budget = format_seconds(self.seconds)
        return (
            f"{failure.reason}; gave up after {attempts} {noun}: the call's budget of {budget} s "
            "(call_timeout) is spent"
        )


class GiveUp(Exception):
    """Internal: the retry loop's final failure, turned into LLMError by the caller."""

    def __init__(self, failure: Failure, attempts: int, reason: str) -> None:
        super().__init__(reason)
        self.failure = failure
        self.attempts = attempts
        self.reason = reason


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Failure],
    policy: RetryPolicy,
    on_retry: Callable[[Failure, float], None] | None = None,
) -> T:
    """Run `attempt()` with a per-attempt timeout and retries, all within the policy's
    call budget; raise GiveUp at the end."""
    attempts = 0
    budget = policy.budget()
    while True:
        attempts += 1
        limit = budget.attempt_timeout(policy.timeout)
        try:
            async with timeout_after(limit):
                return await attempt()
        except asyncio.CancelledError:
            raise
        except (asyncio.TimeoutError, TimeoutError) as exc:
            failure = Failure("timeout", f"timed out after {format_seconds(round(limit, 3))} s", True)
            error: BaseException = exc
        except Exception as exc:  # noqa: BLE001 - every SDK error is classified below
            failure = classify(exc)
            error = exc
        # GiveUp's cause is the last attempt's own exception (an SDK's, with its status and request id)
        if not failure.retryable or attempts > policy.max_retries:
            raise GiveUp(failure, attempts, final_reason(failure, attempts, policy)) from error
        if failure.retry_after is not None and failure.retry_after > policy.max_retry_after:
            reason = (
                f"{failure.reason}; the server asked to retry after {format_seconds(round(failure.retry_after))} s, "
                f"longer than max_retry_after ({format_seconds(policy.max_retry_after)} s)"
            )
            raise GiveUp(failure, attempts, reason) from error
        delay = policy.backoff(attempts - 1, failure.retry_after)
        if not budget.fits(delay):
            raise GiveUp(failure, attempts, budget.spent_reason(failure, attempts)) from error
        if on_retry is not None:
            on_retry(failure, delay)
        await asyncio.sleep(delay)


def final_reason(failure: Failure, attempts: int, policy: RetryPolicy) -> str:
    if attempts <= 1:
        return failure.reason
    if failure.kind == "timeout":
        return f"{failure.reason} (each of {attempts} attempts)"
    if failure.kind == "status":
        return f"{failure.reason} after {attempts} attempts"
    return f"{failure.reason} ({attempts} attempts)"


class ConcurrencyLimit:
    """At most `limit` calls in flight, across every thread and event loop.

    An `asyncio.Semaphore` belongs to one loop; an LLM instance is used from the user's
    loop, from the private loop behind the sync wrappers and from pytest's per-test
    loops, so the count lives behind a thread lock and waiters are woken on their own loop.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._active = 0
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self.max_active = 0

    @property
    def active(self) -> int:
        return self._active

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._active < self.limit and not self._waiters:
                self._active += 1
                self.max_active = max(self.max_active, self._active)
                return
            future: asyncio.Future[None] = loop.create_future()
            entry = (loop, future)
            self._waiters.append(entry)
        try:
            await future
        except BaseException:
            with self._lock:
                try:
                    self._waiters.remove(entry)
                    granted = False
                except ValueError:
                    granted = True  # release() already handed this slot to us
            if granted:
                self.release()
            raise

    def release(self) -> None:
        while True:
            with self._lock:
                if not self._waiters:
                    self._active -= 1
                    return
                loop, future = self._waiters.popleft()
                # the slot passes straight to the waiter: _active is unchanged
            try:
                loop.call_soon_threadsafe(_grant, future)
                return
            except RuntimeError:  # that waiter's loop is closed: give the slot to the next
                continue

    async def __aenter__(self) -> ConcurrencyLimit:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


def _grant(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
