"""The answer and its concise extraction are written at the same time (one LLM round less on the
critical path: benchmarks/query_latency.py), and still fail as they did one after another:
the extraction's error first, nothing left running once the query ends. `both_at_once` on plain
coroutines, then NaiveRAG end to end on Milvus Lite, the bundled model and the scripted server."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from helpers import ANSWER_PROMPT, EXTRACT_PROMPT, FAST_RETRIES, last_request

from deepsearcher.agent import NaiveRAG
from deepsearcher.agent.context import QueryTimeoutError, all_at_once, both_at_once
from deepsearcher.llm.errors import LLMError
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.scripted_llm import Fail, Reply

server = scripted_llm_fixture(name="server", fallback="NO")
QUESTION = "Who built the first compiler?"


class Step:
    """A coroutine that waits until released, then returns or raises; records how it ended."""

    def __init__(self, name: str, error: Exception | None = None) -> None:
        self.name = name
        self.error = error
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.ended = ""

    async def run(self) -> str:
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.ended = "cancelled"
            raise
        self.ended = "failed" if self.error else "returned"
        if self.error:
            raise self.error
        return self.name


def test_both_values_come_back_once_both_ran_together() -> None:
    async def run() -> tuple[str, str]:
        first, second = Step("first"), Step("second")
        pending = asyncio.ensure_future(both_at_once(first.run(), second.run()))
        await asyncio.wait_for(asyncio.gather(first.started.wait(), second.started.wait()), 5)  # both under way
        second.release.set()
        first.release.set()
        return await pending

    assert asyncio.run(run()) == ("first", "second")


def test_a_rounds_steps_come_back_in_order_and_one_failure_stops_the_rest() -> None:
    """DeepSearch's searches and judgements of a round (`all_at_once`): values in the order given;
    when one fails, the others are cancelled before its error is raised (no judge call of a failed
    query goes on running, as it did with asyncio.gather)."""

    async def run() -> tuple[list[str], list[str]]:
        steps = [Step(name) for name in ("a", "b", "c")]
        pending = asyncio.ensure_future(all_at_once(step.run() for step in steps))
        await asyncio.wait_for(asyncio.gather(*(step.started.wait() for step in steps)), 5)
        for step in reversed(steps):
            step.release.set()
        values = await pending
        failing = [Step("a"), Step("b", RuntimeError("judge failed")), Step("c")]
        pending = asyncio.ensure_future(all_at_once(step.run() for step in failing))
        await asyncio.wait_for(asyncio.gather(*(step.started.wait() for step in failing)), 5)
        failing[1].release.set()
        with pytest.raises(RuntimeError, match="judge failed"):
            await pending
        return values, [step.ended for step in failing]

    assert asyncio.run(run()) == (["a", "b", "c"], ["cancelled", "failed", "cancelled"])


def test_the_first_failing_stops_the_second_before_raising() -> None:
    async def run() -> str:
        first, second = Step("first", RuntimeError("extraction failed")), Step("second")
        pending = asyncio.ensure_future(both_at_once(first.run(), second.run()))
        await asyncio.wait_for(second.started.wait(), 5)
        first.release.set()
        with pytest.raises(RuntimeError, match="extraction failed"):
            await pending
        return second.ended  # read at once: asyncio.run cancels what is left only when it ends

    assert asyncio.run(run()) == "cancelled"


@pytest.mark.parametrize(("first_fails", "raised"), [(True, "first failed"), (False, "second failed")])
def test_when_the_second_fails_first_the_error_is_the_one_in_turn_raises(first_fails: bool, raised: str) -> None:
    async def run() -> str:
        first = Step("first", RuntimeError("first failed") if first_fails else None)
        second = Step("second", RuntimeError("second failed"))
        pending = asyncio.ensure_future(both_at_once(first.run(), second.run()))
        await asyncio.wait_for(first.started.wait(), 5)
        second.release.set()  # the second fails while the first is still running
        while second.ended != "failed":
            await asyncio.sleep(0)
        for _ in range(5):  # the loop's turns in which a caller not waiting for the first would raise
            await asyncio.sleep(0)
        assert not pending.done(), "it waits for the first, whose own error would have come first"
        first.release.set()
        with pytest.raises(RuntimeError, match=raised):
            await pending
        return first.ended

    assert asyncio.run(run()) == ("failed" if first_fails else "returned")


def test_cancelling_the_caller_stops_both_before_it_returns() -> None:
    async def run() -> list[str]:
        first, second = Step("first"), Step("second")
        pending = asyncio.ensure_future(both_at_once(first.run(), second.run()))
        await asyncio.wait_for(asyncio.gather(first.started.wait(), second.started.wait()), 5)
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        return [first.ended, second.ended]

    assert asyncio.run(run()) == ["cancelled", "cancelled"]


def test_the_extraction_and_the_answer_are_in_flight_together(server, science_store, embedding) -> None:
    # every reply waits (whichever of the two arrives first): sent in turn, they would never overlap
    server.latency = 0.4
    server.on(EXTRACT_PROMPT, "Grace Hopper")
    server.on(ANSWER_PROMPT, "Answer: Grace Hopper\nGrace Hopper built the A-0 compiler [1].")
    agent = NaiveRAG(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=science_store)
    result = agent.query_result(QUESTION, collections=["science"])
    assert server.max_concurrency == 2 and server.call_count == 2
    assert last_request(server, ANSWER_PROMPT).stream and not last_request(server, EXTRACT_PROMPT).stream
    assert result.short_answer == "Grace Hopper" and result.answer.startswith("Grace Hopper")
    assert set(result.usage_by_step) == {"extract", "answer"}
    assert all(usage.calls == 1 for usage in result.usage_by_step.values())
    answer = next(step for step in result.steps if step.kind == "answer")
    assert answer.data["extracted"] == "Grace Hopper" and [s.kind for s in result.steps][-1] == "answer"


def test_an_llm_serving_one_call_at_a_time_gets_the_extraction_first(server, science_store, embedding) -> None:
    # a local model (llama.cpp, Ollama: max_concurrency 1) would take the two in either order: the
    # answer, waiting for its turn, would go while the extraction waits to retry
    server.on(EXTRACT_PROMPT, Fail.server_error(500), "Grace Hopper")
    server.on(ANSWER_PROMPT, "Answer: Grace Hopper\nGrace Hopper built the A-0 compiler [1].")
    llm = server.llm(max_concurrency=1, **FAST_RETRIES)
    result = NaiveRAG(llm=llm, embedding_model=embedding, vector_db=science_store).query_result(
        QUESTION, collections=["science"]
    )
    sent = [request.last_user_message for request in server.requests]
    assert [prompt.startswith(EXTRACT_PROMPT) for prompt in sent] == [True, True, False]  # retried, then the answer
    assert sent[2].startswith(ANSWER_PROMPT)
    assert result.short_answer == "Grace Hopper"


def test_when_both_calls_fail_the_user_sees_the_extractions_error_as_before(server, science_store, embedding) -> None:
    # the answer is refused at once, the extraction a moment later: one after another, the
    # extraction ran (and failed) first, so its error is the one the user saw and still sees
    server.on(EXTRACT_PROMPT, dataclasses.replace(Fail.status(400, "extraction refused"), latency=0.3))
    server.on(ANSWER_PROMPT, Fail.status(400, "answer refused"))
    agent = NaiveRAG(llm=server.llm(max_retries=0), embedding_model=embedding, vector_db=science_store)
    with pytest.raises(LLMError, match="extraction refused"):
        agent.query_result(QUESTION, collections=["science"])

    server.reset()  # the extraction answers: the answer's own error
    server.on(EXTRACT_PROMPT, "Grace Hopper")
    server.on(ANSWER_PROMPT, Fail.status(400, "answer refused"))
    with pytest.raises(LLMError, match="answer refused"):
        agent.query_result(QUESTION, collections=["science"])


def test_a_hung_extraction_fails_the_query_at_its_deadline_naming_the_extraction(
    server, science_store, embedding
) -> None:
    server.on(EXTRACT_PROMPT, Reply("Grace Hopper", latency=30))
    server.on(ANSWER_PROMPT, "Answer: Grace Hopper\nGrace Hopper built it [1].")
    agent = NaiveRAG(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=science_store)
    tokens: list[str] = []
    with pytest.raises(QueryTimeoutError, match=r"within its 1.5 s deadline: step 'extract'"):
        agent.query_result(
            QUESTION,
            collections=["science"],
            timeout=1.5,
            on_event=lambda event: tokens.append(event.data["token"]) if event.kind == "answer_token" else None,
        )
    assert "".join(tokens).startswith("Answer: Grace Hopper")  # the answer was written meanwhile
