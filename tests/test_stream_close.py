"""Closing a sync stream early never waits forever: a producer that ignores its
cancellation is left running (a daemon thread) after `CLOSE_TIMEOUT`, with a warning.
A well-behaved producer is stopped at once (tests/test_web_crawler.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from deepsearcher.utils import sync_bridge


def test_closing_a_stream_whose_producer_ignores_cancellation_returns(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sync_bridge, "CLOSE_TIMEOUT", 0.5)

    async def stubborn() -> AsyncIterator[int]:
        yield 1
        while True:
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                continue  # a producer that swallows its cancellation

    stream = sync_bridge.iterate_isolated(stubborn)
    assert next(stream) == 1
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="deepsearcher.utils.sync_bridge"):
        stream.close()
    assert time.monotonic() - started < 3
    assert "did not stop within 0.5 s" in caplog.text
