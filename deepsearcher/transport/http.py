"""Blocking HTTP calls under the shared retry policy, for providers whose SDK-free clients are
synchronous (remote embeddings, the hosted Unstructured API).

`call_sync` runs each blocking attempt in a worker thread under `call_with_retries` on
the shared background event loop (`deepsearcher.utils.sync_bridge`), which also works
when the caller itself sits inside a running event loop; `classify_http` turns an
attempt's failure (HTTP status, timeout, dropped connection, unusable reply) into the
retry decision.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TypeVar

import httpx

from deepsearcher.transport.retry import Failure, RetryPolicy, call_with_retries
from deepsearcher.utils.sync_bridge import run_sync

__all__ = ["BadResponse", "HTTPStatusError", "call_sync", "classify_http", "error_detail"]

T = TypeVar("T")


class HTTPStatusError(Exception):
    """A non-2xx answer, carrying what `Failure.from_status` needs."""

    def __init__(self, status: int, detail: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail
        self.headers = headers


class BadResponse(Exception):
    """The server answered 2xx with something that is not the expected reply."""


def classify_http(exc: BaseException) -> Failure:
    """Map one failed attempt (HTTP status, timeout, connection, bad reply) to a retry decision."""
    if isinstance(exc, HTTPStatusError):
        return Failure.from_status(exc.status, exc.detail, exc.headers)
    if isinstance(exc, httpx.TimeoutException):
        return Failure("timeout", f"timed out ({type(exc).__name__})", True)
    if isinstance(exc, httpx.TransportError):
        return Failure(
            "connection",
            f"cannot connect ({exc or type(exc).__name__})",
            True,
            hint="Check base_url and that the server is running",
        )
    if isinstance(exc, BadResponse):
        return Failure("bad_response", f"unexpected reply: {exc}", False)
    return Failure("fatal", f"{type(exc).__name__}: {exc}", False)


def call_sync(
    attempt: Callable[[], T],
    classify: Callable[[BaseException], Failure],
    policy: RetryPolicy,
    on_retry: Callable[[Failure, float], None] | None = None,
) -> T:
    """Run the blocking `attempt()` with the shared retry loop; raises `GiveUp` at the end.

    Each attempt's deadline covers the whole response (httpx's own timeout only bounds
    each read, so a server dripping bytes would never end it); a timed-out attempt's
    thread is left to httpx's read timeout while the caller moves on.
    """

    async def attempt_in_thread() -> T:
        return await asyncio.to_thread(attempt)

    return run_sync(call_with_retries(attempt_in_thread, classify, policy, on_retry))


def error_detail(response: httpx.Response) -> str:
    """The server's own error message (JSON `error.message`, `message`, `detail`) or the body's start."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        for value in (error, payload.get("message"), payload.get("detail")):
            if isinstance(value, str) and value.strip():
                return value.strip()
    return " ".join(response.text.split())[:200]
