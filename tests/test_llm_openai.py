"""The real OpenAI provider (official SDK) against the scripted HTTP server."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from deepsearcher.llm import OpenAI, registry
from deepsearcher.llm.base import ChatResponse, Usage
from deepsearcher.llm.errors import LLMError, MissingAPIKeyError
from deepsearcher.testing import Fail, Reply, scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="plain fallback reply")

FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}


def _words(text: str) -> int:
    return len(text.split())


def test_chat_returns_content_and_usage(server):
    server.on("capital of France", "Paris is the capital")
    llm = server.llm(**FAST)
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    response = llm.chat(messages)
    assert isinstance(response, ChatResponse)
    assert response.content == "Paris is the capital"
    prompt = _words("Answer briefly.") + _words("What is the capital of France?")
    assert response.usage == Usage(prompt, 4, prompt + 4)
    assert response.total_tokens == prompt + 4
    assert llm.calls == 1 and llm.usage_total == response.usage
    request = server.requests[-1]
    assert request.messages == messages
    assert request.model == "scripted-model"
    assert request.authorization == "Bearer test"
    assert request.stream is False


def test_usage_accumulates_over_calls(server):
    llm = server.llm(**FAST)
    first = llm.chat("one two")
    second = llm.chat("three")
    assert llm.calls == 2
    assert llm.usage_total == first.usage + second.usage
    assert llm.usage_total.total_tokens == first.total_tokens + second.total_tokens
    llm.reset_stats()
    assert llm.calls == 0 and llm.usage_total == Usage()


def test_extra_config_keys_are_sent_with_each_request(server):
    llm = server.llm(temperature=0.25, max_tokens=77, **FAST)
    llm.chat("hi", top_p=0.5)
    body = server.requests[-1].body
    assert body["temperature"] == 0.25 and body["max_tokens"] == 77 and body["top_p"] == 0.5


async def test_async_chat_and_json_mode(server):
    server.queue('{"answer": "yes"}')
    llm = server.llm(**FAST)
    response = await llm.achat([{"role": "user", "content": "Reply in JSON"}], json_mode=True)
    assert response.content == '{"answer": "yes"}'
    assert server.requests[-1].json_mode is True
    await llm.achat("no json here")
    assert server.requests[-1].json_mode is False


async def test_streaming_yields_tokens_in_order_then_usage(server):
    server.queue(Reply("alpha beta gamma delta", chunk_delay=0.01))
    llm = server.llm(**FAST)
    stream = llm.astream([{"role": "user", "content": "four words please"}])
    deltas = [delta async for delta in stream]
    assert deltas == ["alpha", " beta", " gamma", " delta"]
    assert stream.content == "alpha beta gamma delta"
    assert stream.usage == Usage(3, 4, 7)
    assert stream.done and stream.response.content == stream.content
    assert server.requests[-1].stream is True
    assert server.requests[-1].body["stream_options"] == {"include_usage": True}
    assert llm.calls == 1 and llm.usage_total == Usage(3, 4, 7)


def test_sync_stream(server):
    server.queue("one two three")
    llm = server.llm(**FAST)
    stream = llm.stream("count")
    assert list(stream) == ["one", " two", " three"]
    assert stream.usage.completion_tokens == 3 and stream.content == "one two three"


async def test_stream_retries_before_first_token(server):
    server.queue(Fail.rate_limit(retry_after=0), Fail.server_error(502), "finally here")
    llm = server.llm(**FAST)
    stream = llm.astream("go")
    assert await stream.collect() == ChatResponse("finally here", Usage(1, 2, 3))
    assert server.call_count == 3 and llm.retries == 2


async def test_stream_cut_after_first_tokens_is_an_error(server):
    server.queue(Fail.drop_mid_stream(after_chunks=2))
    llm = server.llm(**FAST)
    received = []
    with pytest.raises(LLMError, match="stream interrupted after 2 chunks") as info:
        async for delta in llm.astream("go"):
            received.append(delta)
    assert received == ["one", " two"]
    assert server.call_count == 1  # never retried once text was shown
    assert "OpenAI" in str(info.value) and server.base_url in str(info.value)


async def test_sync_chat_inside_running_event_loop(server):
    # As in Jupyter: a loop is running in this thread and sync code calls chat().
    asyncio.get_running_loop()
    llm = server.llm(**FAST)
    response = llm.chat("from inside a loop")
    assert response.content == "plain fallback reply"
    assert llm.calls == 1
    # and the async API still works in this loop with the same instance
    assert (await llm.achat("again")).content == "plain fallback reply"


def test_retry_after_seconds_is_honoured(server):
    server.queue(Fail.rate_limit(retry_after=1), "after the wait")
    llm = server.llm(**FAST)
    start = time.monotonic()
    response = llm.chat("hi")
    elapsed = time.monotonic() - start
    assert response.content == "after the wait"
    gap = server.requests[1].received_at - server.requests[0].received_at
    assert gap >= 0.95 and elapsed >= 0.95
    assert elapsed < 5
    assert llm.retries == 1 and llm.calls == 1


def test_429_until_retries_run_out(server):
    server.queue(*[Fail.rate_limit(retry_after=0)] * 4)
    llm = server.llm(max_retries=3, **FAST)
    with pytest.raises(LLMError) as info:
        llm.chat("hi")
    message = str(info.value)
    assert "429 Too Many Requests after 4 attempts" in message
    assert "OpenAI" in message and "scripted-model" in message and server.base_url in message
    assert "\n" not in message
    assert info.value.status == 429 and info.value.attempts == 4
    assert server.call_count == 4 and llm.failed_calls == 1


def test_retry_after_longer_than_allowed_fails_at_once(server):
    server.queue(Fail.rate_limit(retry_after=3600))
    llm = server.llm(max_retry_after=5, **FAST)
    start = time.monotonic()
    with pytest.raises(LLMError, match="retry after 3600 s"):
        llm.chat("hi")
    assert time.monotonic() - start < 2 and server.call_count == 1


def test_500_then_success(server):
    server.queue(Fail.server_error(500), Fail.server_error(503), "recovered")
    llm = server.llm(**FAST)
    assert llm.chat("hi").content == "recovered"
    assert server.call_count == 3 and llm.retries == 2 and llm.calls == 1


def test_client_errors_are_not_retried(server):
    server.queue(Fail.status(401, "Incorrect API key provided"))
    llm = server.llm(**FAST)
    with pytest.raises(LLMError) as info:
        llm.chat("hi")
    assert "401 Unauthorized: Incorrect API key provided" in str(info.value)
    assert "API key" in str(info.value)
    assert server.call_count == 1


def test_timeout_is_retried_then_named(server):
    server.queue(Fail.timeout(10), Fail.timeout(10))
    llm = server.llm(timeout=0.3, max_retries=1, **FAST)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        llm.chat("hi")
    elapsed = time.monotonic() - start
    assert "timed out after 0.3 s" in str(info.value)
    assert info.value.kind == "timeout" and info.value.attempts == 2
    assert server.call_count == 2
    assert 0.55 < elapsed < 3


def test_timeout_then_success(server):
    server.queue(Fail.timeout(10), "in time")
    llm = server.llm(timeout=0.3, **FAST)
    assert llm.chat("hi").content == "in time"


@pytest.mark.parametrize("failure", [Fail.garbage(), Fail.truncated()], ids=["garbage", "truncated"])
def test_invalid_body_gives_a_clear_error(server, failure):
    server.queue(failure)
    llm = server.llm(max_retries=0, **FAST)
    with pytest.raises(LLMError) as info:
        llm.chat("hi")
    message = str(info.value)
    assert "not a valid chat completion" in message
    assert server.base_url in message and "Traceback" not in message
    assert info.value.kind == "bad_response"


def test_invalid_body_is_retried(server):
    server.queue(Fail.garbage(), Fail.truncated(), "good")
    llm = server.llm(**FAST)
    assert llm.chat("hi").content == "good"
    assert server.call_count == 3


def test_dropped_connection_is_retried_then_named(server):
    server.queue(Fail.drop(), "good")
    llm = server.llm(**FAST)
    assert llm.chat("hi").content == "good"
    server.queue(Fail.drop(), Fail.drop())
    llm = server.llm(max_retries=1, **FAST)
    with pytest.raises(LLMError, match="closed the connection"):
        llm.chat("hi")


def test_connection_refused_names_the_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    llm = OpenAI(model="m", api_key="k", base_url=url, max_retries=1, **FAST)
    with pytest.raises(LLMError) as info:
        llm.chat("hi")
    assert f"connection refused at {url}" in str(info.value)
    assert info.value.kind == "connection" and info.value.attempts == 2


async def test_concurrency_limit_async(server):
    server.latency = 0.3
    llm = server.llm(max_concurrency=2, **FAST)
    start = time.monotonic()
    replies = await asyncio.gather(*(llm.achat(f"question {i}") for i in range(6)))
    elapsed = time.monotonic() - start
    assert len(replies) == 6 and server.call_count == 6
    assert server.max_concurrency == 2
    assert elapsed >= 0.85  # three waves of two
    assert llm.limit.max_active == 2 and llm.limit.active == 0


def test_concurrency_limit_across_threads(server):
    server.latency = 0.2
    llm = server.llm(max_concurrency=2, **FAST)
    errors: list[BaseException] = []

    def call(i: int) -> None:
        try:
            llm.chat(f"thread {i}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not errors
    assert server.call_count == 6 and server.max_concurrency == 2 and llm.calls == 6


async def test_many_parallel_calls_overlap(server):
    server.latency = 0.3
    llm = server.llm(max_concurrency=60, **FAST)
    start = time.monotonic()
    await asyncio.gather(*(llm.achat(str(i)) for i in range(60)))
    assert server.max_concurrency >= 50
    assert time.monotonic() - start < 3


def test_missing_key_for_default_openai_explains_local_servers(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingAPIKeyError) as info:
        OpenAI().chat("hi")
    message = str(info.value)
    assert message.startswith("No API key for OpenAI: set OPENAI_API_KEY or provide_settings.llm.config.api_key.")
    assert "http://localhost:11434/v1" in message and "llama.cpp" in message and "vLLM" in message
    assert "\n" not in message


def test_openai_with_local_base_url_needs_no_key(monkeypatch, server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = OpenAI(model="local", base_url=server.base_url)
    assert llm.chat("hi").content == "plain fallback reply"


def test_key_and_base_url_from_environment(monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    llm = OpenAI()
    assert llm.model == "gpt-4o-mini" and llm.base_url == server.base_url
    llm.chat("hi")
    assert server.requests[-1].authorization == "Bearer env-key"
    assert server.requests[-1].model == "gpt-4o-mini"


def test_registry_resolves_openai():
    assert registry.get("OpenAI") is OpenAI
    info = registry.info("OpenAI")
    assert info is not None and info.env_var == "OPENAI_API_KEY"


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="max_concurrency"):
        OpenAI(api_key="k", max_concurrency=0)
    with pytest.raises(ValueError, match="timeout"):
        OpenAI(api_key="k", timeout=0)
