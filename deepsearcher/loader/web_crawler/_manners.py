"""Crawler manners: spacing requests to one host, and retrying what a busy server asks us
to retry.

- `HostPacer` keeps at least `delay` seconds between the starts of two requests to one
  origin: the larger of the configured per-host delay and the site's robots.txt
  `Crawl-delay` (capped, so a hostile value cannot stall a crawl for hours).
- `retry_delay` decides whether a 429 / 503 answer is retried and after how long: the
  server's Retry-After (seconds or an HTTP date) when it gives one, else a doubling backoff;
  a Retry-After beyond the cap is not waited for.
"""

from __future__ import annotations

import asyncio
import time

from deepsearcher.transport.retry import parse_retry_after

RETRY_STATUSES = frozenset({429, 503})


class HostPacer:
    """Per-origin spacing of requests, shared by every worker of one crawl."""

    def __init__(self, delay: float, max_crawl_delay: float) -> None:
        self.delay = delay
        self.max_crawl_delay = max_crawl_delay
        self._crawl_delays: dict[str, float] = {}
        self._next: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def set_crawl_delay(self, origin: str, seconds: float | None) -> None:
        """Record robots.txt's Crawl-delay for `origin` (None: it has none)."""
        if seconds is not None and seconds > 0:
            self._crawl_delays[origin] = min(float(seconds), self.max_crawl_delay)

    def interval(self, origin: str) -> float:
        return max(self.delay, self._crawl_delays.get(origin, 0.0))

    async def wait_turn(self, origin: str) -> None:
        """Sleep until a request to `origin` may start, and book the next slot."""
        lock = self._locks.setdefault(origin, asyncio.Lock())
        async with lock:
            now = time.monotonic()
            start = max(now, self._next.get(origin, now))
            self._next[origin] = start + self.interval(origin)
        if start > now:
            await asyncio.sleep(start - now)


def retry_delay(status: int, retry_after: str | None, attempt: int, base: float, cap: float) -> float | None:
    """Seconds to wait before retry number `attempt` (0-based) of a `status` answer, or None
    when it is not retried (another status, or a Retry-After longer than `cap`)."""
    if status not in RETRY_STATUSES:
        return None
    asked = parse_retry_after(retry_after)
    if asked is not None:
        return asked if asked <= cap else None
    return min(cap, base * (2**attempt))
