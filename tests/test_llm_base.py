"""BaseLLM's shared machinery: usage types, retry timing, the cross-loop limit, sync wrappers."""

from __future__ import annotations

import asyncio
import email.utils
import threading
import time

import pytest

from deepsearcher.llm._sync import run_sync
from deepsearcher.llm.base import BaseLLM, ChatResponse, Usage
from deepsearcher.llm.errors import LLMError
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.transport.retry import (
    ConcurrencyLimit,
    Failure,
    RetryPolicy,
    parse_retry_after,
    retry_after_from_headers,
)

server = scripted_llm_fixture(name="server", fallback="x y z")


def test_usage_addition_and_sum():
    total = Usage(1, 2) + Usage(10, 20, 30)
    assert total == Usage(11, 22, 33) and Usage(1, 2).total_tokens == 3
    assert sum([Usage(1, 1), Usage(2, 2)], Usage()) == Usage(3, 3, 6)
    assert sum([Usage(1, 1), Usage(2, 2)]) == Usage(3, 3, 6)


def test_chat_response_is_deepsearcher_compatible():
    legacy = ChatResponse("text", 42)
    assert legacy.total_tokens == 42 and legacy.content == "text"
    assert ChatResponse(content="t", total_tokens=7).total_tokens == 7
    modern = ChatResponse("t", Usage(3, 4))
    assert modern.total_tokens == 7 and modern.usage.prompt_tokens == 3
    assert ChatResponse(None).content == ""


def test_retry_after_parsing():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 <= parse_retry_after(in_ten) <= 10
    past = email.utils.formatdate(time.time() - 100, usegmt=True)
    assert parse_retry_after(past) == 0.0
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25


def test_backoff_grows_with_jitter_and_honours_retry_after():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    delays = [[policy.backoff(i) for _ in range(50)] for i in range(5)]
    assert all(0.5 <= d <= 1.0 for d in delays[0])
    assert all(4.0 <= d <= 8.0 for d in delays[3]) and all(d <= 8.0 for d in delays[4])
    assert len(set(delays[2])) > 1  # jitter
    assert 3.0 <= policy.backoff(0, retry_after=3.0) <= 3.25


def test_failure_from_status():
    assert Failure.from_status(429).retryable and Failure.from_status(503).retryable
    bad = Failure.from_status(400, "model not found")
    assert not bad.retryable and bad.reason == "400 Bad Request: model not found"
    assert Failure.from_status(429, headers={"retry-after": "2"}).retry_after == 2.0


def test_concurrency_limit_across_loops_and_threads():
    limit = ConcurrencyLimit(2)
    active = 0
    peak = 0
    lock = threading.Lock()

    async def work():
        nonlocal active, peak
        async with limit:
            with lock:
                active += 1
                peak = max(peak, active)
            await asyncio.sleep(0.05)
            with lock:
                active -= 1

    async def three():
        await asyncio.wait_for(asyncio.gather(*(work() for _ in range(3))), 10)

    def in_own_loop():
        asyncio.run(three())

    threads = [threading.Thread(target=in_own_loop) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert peak == 2 and limit.active == 0 and limit.max_active == 2


async def test_cancelled_waiter_does_not_leak_a_slot():
    limit = ConcurrencyLimit(1)
    await limit.acquire()
    waiter = asyncio.ensure_future(limit.acquire())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    limit.release()
    assert limit.active == 0
    await asyncio.wait_for(limit.acquire(), 1)  # the slot is free again
    limit.release()


def test_run_sync_inside_running_loop_and_nested():
    async def inner():
        await asyncio.sleep(0)
        return 5

    async def outer():
        # sync code inside a running loop, which itself is on the private loop's thread
        return run_sync(inner()) + 1

    assert run_sync(outer()) == 6
    assert asyncio.run(outer()) == 6


class _Echo(BaseLLM):
    """A minimal provider without streaming: the default _astream_once is used."""

    async def _achat_once(self, messages, *, json_mode=False, **kwargs):
        if kwargs.get("explode"):
            raise RuntimeError("provider bug")
        return ChatResponse(messages[-1]["content"].upper(), Usage(1, 1))


def test_custom_provider_gets_the_shared_behaviour():
    llm = _Echo("echo-model", base_url="local://echo", max_retries=2, retry_base_delay=0.01)
    assert llm.chat("hi").content == "HI"
    stream = llm.stream("abc")
    assert list(stream) == ["ABC"] and stream.usage == Usage(1, 1)
    assert llm.calls == 2 and llm.usage_total == Usage(2, 2)
    with pytest.raises(LLMError) as info:
        llm.chat("x", explode=True)
    assert "RuntimeError: provider bug" in str(info.value) and info.value.attempts == 1  # not retried
    assert "_Echo call failed (model echo-model at local://echo)" in str(info.value)
    with pytest.raises(TypeError, match="messages"):
        llm.chat([])


async def test_stream_closed_early_frees_its_slot(server):
    llm = server.llm(max_concurrency=1)
    async with llm.astream("go") as stream:
        async for _ in stream:
            break
    assert llm.limit.active == 0
    assert (await asyncio.wait_for(llm.achat("next"), 5)).content == "x y z"


def test_repr_and_settings(server):
    llm = server.llm(timeout=12, max_retries=5, max_concurrency=3)
    assert llm.timeout == 12 and llm.max_retries == 5 and llm.max_concurrency == 3
    assert "scripted-model" in repr(llm) and server.base_url in repr(llm)
