"""The agents end to end: real store, real model, the real OpenAI provider against the
scripted OpenAI-compatible server on 127.0.0.1. Nothing inside the agents is mocked."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from helpers import (
    ANSWER_PROMPT,
    CHAIN_FINAL_PROMPT,
    FAST_RETRIES,
    JUDGE_PROMPT,
    SUB_QUERIES_PROMPT,
    last_request,
    make_docs,
)

from deepsearcher.agent import ChainOfRAG, CollectionRouter, DeepSearch, NaiveRAG, RAGRouter
from deepsearcher.agent.context import RunContext
from deepsearcher.agent.result import Source, apply_citations
from deepsearcher.llm.errors import LLMOutputError
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types import Chunk
from deepsearcher.types.errors import CollectionNotFoundError, NoSearchableDataError
from deepsearcher.vector_db.milvus import Milvus

server = scripted_llm_fixture(name="server", fallback="NO")
FAST = FAST_RETRIES

SUB_QUERIES = SUB_QUERIES_PROMPT
JUDGE = JUDGE_PROMPT
REFLECT = "These queries were already searched"
ANSWER = ANSWER_PROMPT
QUESTION = "Who built the first compiler and in which year?"


@pytest.fixture
def store(tmp_path: Path, milvus_uri: str, embedding):
    db = Milvus(uri=milvus_uri)
    docs = make_docs(tmp_path / "docs")
    IngestionPipeline(embedding, db).run(
        iter_file_sources([docs], FileLoader()),
        collection_name="science",
        collection_description="Notes on science and computing history",
    )
    yield db
    db.close()


def cite_hopper(request) -> str:
    """Answer like a good model: cite the source that mentions Hopper, plus one bogus number."""
    match = re.search(r"\[(\d+)\] \(Grace Hopper\)", request.last_user_message)
    assert match, "the answer prompt must list the Hopper source"
    return f"Grace Hopper built the first compiler in 1952 [{match.group(1)}][99]."


def judge_by_content(request) -> str:
    return "YES" if "Hopper" in request.last_user_message.split("Passage:")[-1] else "NO"


def script_deep_search(server, *reflections: str) -> None:
    """Rules match first-come: pass the reflection replies here rather than adding a rule later."""
    server.on(SUB_QUERIES, '["Who built the first compiler?", "When was the A-0 system built?"]')
    server.on(JUDGE, judge_by_content)
    server.on(REFLECT, *(reflections or ("[]",)))
    server.on(ANSWER, cite_hopper)


def test_deep_search_answers_with_citations_and_accounts_usage(server, store, embedding) -> None:
    script_deep_search(server)
    llm = server.llm(**FAST)
    agent = DeepSearch(llm=llm, embedding_model=embedding, vector_db=store, max_iter=2)
    result = agent.query_result(QUESTION)

    assert result.answer == "Grace Hopper built the first compiler in 1952 [1]."  # [99] pointed nowhere: removed
    cited = [source for source in result.sources if source.cited]
    assert len(cited) == 1 and cited[0].title == "Grace Hopper" and cited[0].reference.endswith("records.jsonl")
    assert all("Hopper" in r.text for r in result.retrieved_results)
    kinds = [step.kind for step in result.steps]
    assert kinds[:2] == ["collections", "sub_queries"]
    assert kinds.count("search") == 3, "the question and its 2 sub-queries"
    assert "judge" in kinds and "reflection" in kinds and kinds[-1] == "answer"
    assert set(result.usage_by_step) == {"sub_queries", "judge", "reflection", "extract", "answer"}
    assert result.llm_calls == server.call_count == llm.calls
    assert result.total_tokens == llm.usage_total.total_tokens > 0
    assert result.wall_seconds > 0
    sub_query_request = next(r for r in server.requests if SUB_QUERIES in r.last_user_message)
    assert sub_query_request.json_mode is True  # list steps use the provider's JSON mode
    assert not any(r.json_mode for r in server.requests if JUDGE in r.last_user_message)


def test_deep_search_runs_one_iterations_searches_and_judgements_concurrently(server, store, embedding) -> None:
    script_deep_search(server)
    server.latency = 0.2
    agent = DeepSearch(
        llm=server.llm(max_concurrency=8, **FAST), embedding_model=embedding, vector_db=store, max_iter=1, top_k=4
    )
    result = agent.query_result(QUESTION)
    judged = result.usage_by_step["judge"].calls
    assert judged >= 4
    assert server.max_concurrency >= 4  # the judgements were in flight together, not one by one


def test_deep_search_reflection_drives_more_iterations_up_to_max_iter(server, store, embedding) -> None:
    script_deep_search(server, '["sourdough starter yeast"]', '["Krafla caldera eruptions"]', '["never asked"]')
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=3)
    result = agent.query_result(QUESTION)
    iterations = sorted({step.data["iteration"] for step in result.steps if step.kind == "search"})
    assert iterations == [1, 2, 3]
    reflections = [step.data["queries"] for step in result.steps if step.kind == "reflection"]
    assert reflections == [["sourdough starter yeast"], ["Krafla caldera eruptions"]]  # none after the last iteration


def test_per_call_max_iter_overrides_the_agents_default(server, store, embedding) -> None:
    script_deep_search(server, '["more please"]')
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=3)
    result = agent.query_result(QUESTION, max_iter=1)
    assert {step.data["iteration"] for step in result.steps if step.kind == "search"} == {1}
    assert "reflection" not in result.usage_by_step


def test_token_budget_stops_the_search_and_still_answers(server, store, embedding) -> None:
    script_deep_search(server, '["more please"]')
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=3)
    result = agent.query_result(QUESTION, max_tokens=50)
    assert result.stopped_by_budget
    assert [s.kind for s in result.steps].count("budget_stop") == 1
    assert result.answer.startswith("Grace Hopper")
    assert {step.data["iteration"] for step in result.steps if step.kind == "search"} == {1}


def test_unparseable_sub_queries_raise_a_clear_error_after_one_repair(server, store, embedding) -> None:
    server.on(SUB_QUERIES, "I would rather not", "still no list")
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    with pytest.raises(LLMOutputError) as info:
        agent.query_result(QUESTION)
    assert info.value.step == "sub_queries"
    assert "sub_queries" in str(info.value)
    assert server.call_count == 2  # the question, then the one repair


def test_chain_of_rag_follows_up_and_stops_early(server, store, embedding) -> None:
    server.on("single next follow-up question", "Who built the first compiler?")
    server.on("If they do not contain the answer", "Grace Hopper built the A-0 compiler in 1952.")
    server.on("Which passages support the answer", lambda r: "[" + str(_index_of(r.last_user_message, "Hopper")) + "]")
    server.on("enough to answer the question", "YES")
    server.on("step-by-step findings", lambda r: "Grace Hopper, in 1952 [1].")
    agent = ChainOfRAG(
        llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=4, early_stopping=True
    )
    result = agent.query_result(QUESTION)
    assert result.answer == "Grace Hopper, in 1952 [1]."
    assert result.sources[0].cited and result.sources[0].title == "Grace Hopper"
    hops = [step for step in result.steps if step.kind == "intermediate_answer"]
    assert len(hops) == 1 and hops[0].data["answer"].startswith("Grace Hopper")
    assert set(result.usage_by_step) == {
        "followup_query",
        "intermediate_answer",
        "supporting_docs",
        "early_stopping",
        "extract",
        "answer",
    }
    final_prompt = last_request(server, CHAIN_FINAL_PROMPT).last_user_message
    assert "Follow-up question 1: Who built the first compiler?" in final_prompt


def _index_of(prompt: str, needle: str) -> int:
    for match in re.finditer(r"\[(\d+)\] ([^\n]*)", prompt):
        if needle in match.group(2):
            return int(match.group(1))
    raise AssertionError(f"{needle} not among the passages")


def test_naive_rag_is_one_retrieval_and_one_call(server, store, embedding) -> None:
    server.on(ANSWER, cite_hopper)
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    answer, results, tokens = agent.query("Who built the first compiler?")
    assert answer.startswith("Grace Hopper") and "[99]" not in answer
    assert len(results) == 4  # all chunks of the small collection, top_k 10
    assert server.call_count == 2 and tokens > 0  # the answer's extraction, then the answer


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("2", "ChainOfRAG"),
        ("The best agent is [2] because it chains facts.", "ChainOfRAG"),
        ("<think>maybe 2</think>1", "DeepSearch"),
    ],
)
def test_rag_router_parses_the_agent_number(server, store, embedding, reply: str, expected: str) -> None:
    server.on("You route a question", reply)
    llm = server.llm(**FAST)
    router = RAGRouter(llm=llm, rag_agents=[DeepSearch(llm, embedding, store), ChainOfRAG(llm, embedding, store)])
    ctx = RunContext()
    chosen = router_route(router, ctx)
    assert type(chosen).__name__ == expected
    assert ctx.steps[0].kind == "route" and ctx.steps[0].data == {"agent": expected, "routed": True}
    prompt = server.requests[0].last_user_message
    assert "[1] This agent suits general" in prompt and "[2] This agent suits multi-hop" in prompt


def router_route(router: RAGRouter, ctx: RunContext):
    from deepsearcher.llm._sync import run_sync

    return run_sync(router.aroute(QUESTION, ctx))


def test_rag_router_reads_multi_digit_numbers_and_skips_the_llm_for_one_agent(server, store, embedding) -> None:
    llm = server.llm(**FAST)
    agents = [NaiveRAG(llm, embedding, store, top_k=k) for k in range(1, 12)]
    server.on("You route a question", "Agent 10 fits best.")
    assert router_route(RAGRouter(llm=llm, rag_agents=agents), RunContext()) is agents[9]
    calls = server.call_count
    assert router_route(RAGRouter(llm=llm, rag_agents=agents[:1]), RunContext()) is agents[0]
    assert server.call_count == calls  # one agent: no LLM call


def test_collection_router_zero_one_many_and_authorization(server, tmp_path: Path, milvus_uri: str, embedding) -> None:
    db = Milvus(uri=milvus_uri)
    llm = server.llm(**FAST)
    router = CollectionRouter(llm=llm, vector_db=db, dim=embedding.dimension)
    from deepsearcher.llm._sync import run_sync

    assert run_sync(router.aroute(QUESTION, RunContext())) == []  # no collections at all
    for name, description in [
        ("science", "Computing history"),
        ("cooking", "Recipes and baking"),
        ("misc", ""),
        ("deepsearcher", "The main store"),
        ("empty", ""),
    ]:
        db.init_collection(
            dim=embedding.dimension, collection=name, description=description, embedding_model=embedding.model_name
        )
        if name != "empty":  # an empty collection has nothing to route to: never listed, never added
            db.insert_data(name, [Chunk(f"A note on {name}.", f"{name}.txt", embedding=embedding.embed_query(name))])
    assert (
        run_sync(router.aroute(QUESTION, RunContext(authorized_collections={"empty"}))) == [] and server.call_count == 0
    )
    one = RunContext(authorized_collections={"cooking"})
    assert run_sync(router.aroute(QUESTION, one)) == ["cooking"] and server.call_count == 0

    server.on("You choose which document collections", '["science", "invented_by_llm", "science"]')
    chosen = run_sync(router.aroute(QUESTION, RunContext()))
    # the LLM's pick first; invented name dropped; de-duplicated; no-description and default collections added
    assert chosen[0] == "science" and sorted(chosen) == ["deepsearcher", "misc", "science"]
    restricted = run_sync(router.aroute(QUESTION, RunContext(authorized_collections={"science", "cooking"})))
    assert restricted == ["science"]
    prompt = server.requests[-1].last_user_message
    assert "cooking" in prompt and "misc" not in prompt and "deepsearcher" not in prompt
    assert "empty" not in server.requests[0].last_user_message
    db.close()


def test_explicit_collections_outside_the_authorized_set_are_never_searched(server, store, embedding) -> None:
    server.on(ANSWER, "Nothing found.")
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    # nothing the key may use is left, so there is nothing to answer from: a clear error, no LLM call
    with pytest.raises(NoSearchableDataError, match="Nothing to search"):
        agent.query_result(QUESTION, collections=["science"], authorized_collections={"other"})
    assert server.call_count == 0


async def test_sync_api_works_inside_a_running_event_loop(server, store, embedding) -> None:
    server.on(ANSWER, cite_hopper)
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    answer, _, _ = agent.query("Who built the first compiler?")  # sync call from async code (Jupyter)
    assert answer.startswith("Grace Hopper")


async def test_stream_events_arrive_in_order_then_the_result(server, store, embedding) -> None:
    script_deep_search(server)
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1)
    events = [event async for event in agent.astream_events(QUESTION)]
    kinds = [event.kind for event in events]
    assert kinds[0] == "collections" and kinds[1] == "sub_queries"
    first_token = kinds.index("answer_token")
    assert kinds.index("judge") < first_token < kinds.index("answer") < kinds.index("result") == len(kinds) - 1
    tokens = "".join(event.data["token"] for event in events if event.kind == "answer_token")
    assert tokens.startswith("Grace Hopper built the first compiler")
    assert events[-1].data["result"].answer.startswith("Grace Hopper")


def test_citation_mapping() -> None:
    sources = [Source(1, "a.md", "x"), Source(2, "b.md", "y")]
    assert apply_citations("A [1], B [2, 7] and C [9].", sources) == "A [1], B [2] and C."
    assert [s.cited for s in sources] == [True, True]
    fresh = [Source(1, "a.md", "x")]
    assert apply_citations("Nothing cited.", fresh) == "Nothing cited." and not fresh[0].cited


def test_the_first_search_costs_are_paid_while_the_first_llm_call_is_in_flight(server, store, embedding) -> None:
    """The store's one-off first-search work (Milvus Lite: ~0.5 s) starts as soon as the collections
    are chosen, in its own thread, so it overlaps the sub-query call instead of following it."""
    script_deep_search(server)
    server.latency = 0.2
    threads: list[str] = []
    search = store.search_data

    def recording_search(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return search(*args, **kwargs)

    store.search_data = recording_search
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1)
    result = agent.query_result(QUESTION, collections=["science"])
    assert threads[0] == "deepsearcher-warm-up"
    assert threads.count("deepsearcher-warm-up") == 1
    assert result.usage_by_step["judge"].calls >= 1
    agent.query_result(QUESTION, collections=["science"])
    assert threads.count("deepsearcher-warm-up") == 1  # once per collection and retriever


def test_a_failed_warm_up_leaves_the_error_to_the_real_search(server, store, embedding) -> None:
    script_deep_search(server)
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1)
    store.clear_db("science")
    with pytest.raises(CollectionNotFoundError, match="Collection 'science' does not exist"):
        agent.query_result(QUESTION, collections=["science"])
