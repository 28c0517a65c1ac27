"""The HTTP connection rules uvicorn does not apply by itself: a deadline for a request's headers and
a bound on their size.

uvicorn closes a connection that sits idle *between* requests (`timeout_keep_alive`), but one that
opens and never finishes its headers (slowloris), or never sends a byte, stays open for good; and
h11 bounds only headers that arrive in pieces, not 100 KB sent at once. `GuardedH11Protocol` gives
every request `HEADER_TIMEOUT` seconds from its first byte (a new connection: from its opening) to
complete its headers, at most `MAX_HEADER_BYTES` of them: else 408 / 431 and the connection closed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT", "KEEP_ALIVE_TIMEOUT", "MAX_HEADER_BYTES", "GuardedH11Protocol", "uvicorn_options"]

logger = logging.getLogger("deepsearcher.server")

#: Seconds a client has to send a whole request line and headers.
HEADER_TIMEOUT = 10.0
#: Bytes of request line and headers at most (a browser's are a few KB).
MAX_HEADER_BYTES = 16 * 1024
#: Seconds an idle keep-alive connection stays open between requests.
KEEP_ALIVE_TIMEOUT = 5
#: Seconds a refused connection keeps reading (and dropping) what the client still sends before it
#: closes: closing with unread input makes the kernel reset the connection, and a reset can destroy
#: the 408 / 431 answer before the client reads it (a lingering close, as web servers do).
LINGER_SECONDS = 2.0


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header deadline and size bound of the module docstring."""

    header_timeout = HEADER_TIMEOUT
    max_header_bytes = MAX_HEADER_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._header_bytes = 0
        self._tail = b""  # the last bytes seen: the blank line ending the headers may straddle two reads
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:  # answered already: the rest of what the client sends is dropped
            return
        if self._between_requests():
            self._arm()
        if self._header_deadline is not None:  # still reading this request's headers
            seen = self._tail + data
            end = seen.find(b"\r\n\r\n")
            self._header_bytes += len(data) if end < 0 else max(0, end - len(self._tail))
            self._tail = seen[-3:]
            if self._header_bytes > self.max_header_bytes:
                self._refuse(431, "Request Header Fields Too Large", f"headers over {self.max_header_bytes} bytes")
                return
            if end >= 0:
                self._disarm()
        super().data_received(data)

    def _between_requests(self) -> bool:
        return self._header_deadline is None and (self.cycle is None or self.cycle.response_complete)

    def _arm(self) -> None:
        if self._header_deadline is None:
            self._header_bytes = 0
            self._tail = b""
            self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if self.cycle is None or self.cycle.response_complete:
            self._refuse(408, "Request Timeout", f"no complete request headers in {self.header_timeout:g} s")

    def _refuse(self, status: int, reason: str, why: str) -> None:
        self._disarm()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        logger.info("closed the connection of %s: %s", client, why)
        if not self.transport.is_closing():
            body = f'{{"error": "{reason}: {why}."}}'.encode()
            head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            self.transport.write(head.encode() + b"connection: close\r\n\r\n" + body)
            self._refused = True
            if self.transport.can_write_eof():
                self.transport.write_eof()  # the answer, then end of stream; input is read until the linger ends
                self.loop.call_later(LINGER_SECONDS, self.transport.close)
            else:
                self.transport.close()

    def eof_received(self) -> None:
        if self._refused:  # the client read the answer and closed its side
            self.transport.close()
            return
        super().eof_received()


def uvicorn_options(app: object = None) -> dict[str, Any]:
    """What every DeepSearcher server runs uvicorn with (`deepsearcher serve`, ServerThread); the
    header deadline is the app's `server.header_timeout` when it has one."""
    state = getattr(getattr(app, "state", None), "deepsearcher", None)
    timeout = getattr(getattr(state, "settings", None), "header_timeout", HEADER_TIMEOUT)
    protocol = type("GuardedH11Protocol", (GuardedH11Protocol,), {"header_timeout": float(timeout)})
    # X-Forwarded-For names the client only when a configured proxy sent it (uvicorn's default trusts
    # 127.0.0.1, where any local process could pick a new address for each key it guesses).
    proxies = list(getattr(getattr(state, "settings", None), "trusted_proxies", None) or [])
    return {
        "http": protocol,
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": proxies or None,
    }
