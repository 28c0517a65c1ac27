"""The scripted OpenAI-compatible server itself, checked with a plain HTTP client."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from deepsearcher.testing import Fail, Reply, ScriptedLLMServer, scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="fallback text")


def _chat(server, content, **body):
    payload = {"model": "m", "messages": [{"role": "user", "content": content}], **body}
    return httpx.post(
        server.base_url + "/chat/completions", json=payload, headers={"Authorization": "Bearer abc"}, timeout=10
    )


def test_starts_fast_and_stops():
    start = time.monotonic()
    with ScriptedLLMServer() as fresh:
        assert time.monotonic() - start < 1
        assert fresh.port > 0 and fresh.url.startswith("http://127.0.0.1:")
        assert httpx.get(fresh.url + "/health").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(fresh.url + "/health", timeout=2)


def test_models_endpoint(server):
    data = httpx.get(server.base_url + "/models").json()
    assert data["object"] == "list" and data["data"][0]["id"] == "scripted-model"


def test_completion_shape_usage_and_recording(server):
    response = _chat(server, "three little words")
    assert response.status_code == 200
    data = response.json()
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "fallback text"}
    assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    request = server.requests[0]
    assert request.authorization == "Bearer abc" and request.model == "m" and not request.stream
    assert request.last_user_message == "three little words"
    assert server.call_count == 1


def test_rules_queue_and_fallback(server):
    server.on(r"weather", "sunny", "rainy")  # successive matches; the last repeats
    server.on(lambda request: "secret" in request.prompt_text, lambda request: f"echo {len(request.messages)}")
    server.on("system-only", "from system rule", where="system")
    server.queue("queued first")
    assert _chat(server, "weather?").json()["choices"][0]["message"]["content"] == "queued first"
    assert _chat(server, "weather?").json()["choices"][0]["message"]["content"] == "sunny"
    assert _chat(server, "weather?").json()["choices"][0]["message"]["content"] == "rainy"
    assert _chat(server, "weather again").json()["choices"][0]["message"]["content"] == "rainy"
    assert _chat(server, "a secret").json()["choices"][0]["message"]["content"] == "echo 1"
    assert _chat(server, "system-only").json()["choices"][0]["message"]["content"] == "fallback text"
    body = {"model": "m", "messages": [{"role": "system", "content": "system-only"}, {"role": "user", "content": "x"}]}
    assert (
        httpx.post(server.base_url + "/chat/completions", json=body).json()["choices"][0]["message"]["content"]
        == "from system rule"
    )
    server.reset()
    assert (
        server.call_count == 0
        and _chat(server, "weather").json()["choices"][0]["message"]["content"] == "fallback text"
    )


def test_streaming_sse(server):
    server.queue("one two three")
    payload = {
        "model": "m",
        "messages": [{"role": "user", "content": "go"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", server.base_url + "/chat/completions", json=payload) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "one two three"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3
    # without include_usage there is no usage chunk
    payload.pop("stream_options")
    with httpx.stream("POST", server.base_url + "/chat/completions", json=payload) as response:
        events = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert all("usage" not in json.loads(e) for e in events[:-1])


def test_failures_on_purpose(server):
    server.queue(Fail.rate_limit(retry_after=7))
    response = _chat(server, "x")
    assert response.status_code == 429 and response.headers["retry-after"] == "7"
    assert response.json()["error"]["type"] == "rate_limit_exceeded"
    server.queue(Fail.server_error(503))
    assert _chat(server, "x").status_code == 503
    server.queue(Fail.garbage("<html>nope</html>"))
    response = _chat(server, "x")
    assert response.status_code == 200 and response.text == "<html>nope</html>"
    server.queue(Fail.truncated())
    response = _chat(server, "x")
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.text)
    assert response.text.startswith('{"id": "chatcmpl-')
    server.queue(Fail.drop())
    with pytest.raises(httpx.RemoteProtocolError):
        _chat(server, "x")
    server.queue(Fail.timeout(5))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(server.base_url + "/chat/completions", json={"messages": []}, timeout=0.3)
    assert server.call_count == 6
    assert _chat(server, "still alive").status_code == 200


def test_bad_requests(server):
    assert httpx.post(server.base_url + "/chat/completions", content=b"not json").status_code == 400
    assert httpx.get(server.url + "/nowhere").status_code == 404


async def test_fifty_concurrent_requests_overlap(server):
    server.latency = 0.3
    async with httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_connections=100)) as client:
        payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        start = time.monotonic()
        responses = await asyncio.gather(
            *(client.post(server.base_url + "/chat/completions", json=payload) for _ in range(60))
        )
        elapsed = time.monotonic() - start
    assert all(r.status_code == 200 for r in responses)
    assert server.max_concurrency >= 50 and elapsed < 3


def test_per_reply_latency(server):
    server.queue(Reply("slow", latency=0.4))
    start = time.monotonic()
    assert _chat(server, "x").json()["choices"][0]["message"]["content"] == "slow"
    assert time.monotonic() - start >= 0.35


def test_ready_made_llm_config(server):
    config = server.llm_config(max_retries=0)
    assert config == {
        "provider": "OpenAI",
        "config": {"model": "scripted-model", "api_key": "test", "base_url": server.base_url, "max_retries": 0},
    }
