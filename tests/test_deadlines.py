"""Deadlines end to end: every LLM call has a total deadline (streamed or not, retries
included) and a query has an overall one. The real OpenAI provider talks to the scripted
server on 127.0.0.1, which is told to hang or to drip tokens."""

from __future__ import annotations

import time

import pytest

from deepsearcher.agent import DeepSearch
from deepsearcher.agent.context import QueryTimeoutError
from deepsearcher.llm.errors import LLMError
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.scripted_llm import Reply

server = scripted_llm_fixture(name="server", fallback="NO")
FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}


def test_a_reply_dripping_tokens_ends_at_the_stream_deadline(server) -> None:
    server.queue(Reply("word " * 200, chunk_delay=0.05))
    llm = server.llm(stream_timeout=1.0, **FAST)
    started = time.monotonic()
    parts = []
    with pytest.raises(LLMError, match=r"longer than 1 s \(stream_timeout\)"):
        for token in llm.stream("tell me a long story"):
            parts.append(token)
    assert time.monotonic() - started < 3
    assert 5 < len(parts) < 200  # it did stream, and it was cut


def test_a_hung_server_fails_the_call_within_its_budget_retries_included(server) -> None:
    server.queue(*[Reply("late", latency=10)] * 6)
    llm = server.llm(timeout=0.4, call_timeout=1.0, max_retries=5, **FAST)
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        llm.chat("hello?")
    elapsed = time.monotonic() - started
    assert elapsed < 2.5
    assert "call_timeout" in str(info.value) and "timed out" in str(info.value)
    assert server.call_count >= 2  # it did retry, inside the budget


def test_a_stream_that_never_starts_fails_within_the_call_budget(server) -> None:
    server.queue(*[Reply("late", latency=10)] * 6)
    llm = server.llm(timeout=0.4, call_timeout=1.0, max_retries=5, **FAST)
    started = time.monotonic()
    with pytest.raises(LLMError, match="call_timeout"):
        list(llm.stream("hello?"))
    assert time.monotonic() - started < 2.5


def test_defaults_fail_a_hung_call_well_under_a_minute(server) -> None:
    llm = server.llm()
    assert llm.timeout <= 30 and llm.policy.call_timeout <= 45


@pytest.fixture
def store(science_store):
    return science_store


def test_a_query_past_its_deadline_answers_from_what_it_found(server, store, embedding) -> None:
    server.on("Break the question below", Reply('["Who built the first compiler?"]', latency=2.2))
    server.on("Does the passage below contain", "YES")
    server.on("These queries were already searched", '["another angle"]')
    server.on("Answer the question using only the numbered sources", "Grace Hopper [1].")
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=3)
    result = agent.query_result("Who built the first compiler?", collections=["science"], timeout=3.0)
    assert result.stopped_by_deadline
    assert result.answer.startswith("Grace Hopper")
    assert "deadline_stop" in [step.kind for step in result.steps]
    assert not any("These queries were already searched" in r.last_user_message for r in server.requests)


def test_a_query_whose_step_hangs_fails_clearly_at_its_deadline(server, store, embedding) -> None:
    server.on("Break the question below", Reply('["x"]', latency=10))
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError, match=r"within its 0.8 s deadline: step 'sub_queries'"):
        agent.query_result("Who built the first compiler?", collections=["science"], timeout=0.8)
    assert time.monotonic() - started < 2
