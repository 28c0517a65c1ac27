"""DeepSearcher's hooks and keywords on the agents and routers: `authorized_collection_set` and
`tenant_id` (upstream PR #268), a subclass's own `retrieve` or `CollectionRouter.invoke`,
`route_collection=False`, and a router that picks no collection (all permitted ones are searched,
and said so). Real Milvus Lite, the real embedding model, the scripted LLM server."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from helpers import CHAIN_FINAL_PROMPT, last_request

from deepsearcher.agent import ChainOfRAG, CollectionRouter, DeepSearch, NaiveRAG
from deepsearcher.llm._sync import run_sync
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types import Chunk, RetrievalResult
from deepsearcher.types.errors import NoSearchableDataError
from deepsearcher.vector_db.milvus import Milvus

server = scripted_llm_fixture(name="server", fallback="NO")
FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}
ROUTER = "You choose which document collections"
ANSWER = "Answer the question using only the numbered sources"
NOTES = {
    "science": ["Grace Hopper built the first compiler, the A-0 system, in 1952.", "Ada Lovelace wrote a program."],
    "cooking": ["Sourdough bread rises with a wild yeast starter.", "Bake the loaf at 230 degrees."],
}


class RecordingMilvus(Milvus):
    """A user's own store (a Milvus subclass) that records the keywords each search gets."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.searches: list[tuple[str | None, dict[str, Any]]] = []

    def search_data(self, collection: str | None, vector: list[float], *args: Any, **kwargs: Any) -> Any:
        self.searches.append((collection, {k: v for k, v in kwargs.items() if k in ("tenant_id",)}))
        return super().search_data(collection, vector, *args, **kwargs)


@pytest.fixture
def store(milvus_uri: str, embedding):
    db = RecordingMilvus(uri=milvus_uri)
    for name, texts in NOTES.items():
        db.init_collection(
            dim=embedding.dimension,
            collection=name,
            description=f"Notes on {name}",
            embedding_model=embedding.model_name,
        )
        db.insert_data(name, [Chunk(t, f"{name}.txt", embedding=embedding.embed_query(t)) for t in texts])
    db.init_collection(dim=embedding.dimension, collection="empty", description="Nothing yet")
    yield db
    db.close()


def searched(store: RecordingMilvus) -> set[str | None]:
    return {collection for collection, _ in store.searches}


def test_authorized_collection_set_limits_the_query_and_skips_routing(server, store, embedding) -> None:
    server.on(ANSWER, "Bake it [1].")
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    answer, results, _ = agent.query("How is bread baked?", authorized_collection_set={"cooking"})
    assert searched(store) == {"cooking"} and {r.reference for r in results} == {"cooking.txt"}
    prompts_sent = [r.last_user_message.split()[0] for r in server.requests]
    # sent at the same time, so in either order
    assert sorted(prompts_sent) == ["Answer", "Read"], "no routing call: the answer's extraction and the answer"


def test_tenant_id_reaches_every_search_of_a_users_store(server, store, embedding) -> None:
    server.on("Break the question below", '["first compiler", "A-0 year"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on(ANSWER, "Grace Hopper [1].")
    agent = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, max_iter=1)
    agent.query("Who built the first compiler?", tenant_id="tenant_a", authorized_collection_set=["science"])
    assert store.searches and all(kw == {"tenant_id": "tenant_a"} for _, kw in store.searches)
    assert searched(store) == {"science"}
    results, _, _ = agent.retrieve("Who built the first compiler?", tenant_id="tenant_b", collections=["science"])
    assert store.searches[-1][1] == {"tenant_id": "tenant_b"} and results


def test_collection_router_invoke_takes_deepsearchers_keyword(server, store, embedding) -> None:
    router = CollectionRouter(llm=server.llm(**FAST), vector_db=store, dim=embedding.dimension)
    assert sorted(router.all_collections) == ["cooking", "empty", "science"]
    chosen, tokens = router.invoke("bread", dim=embedding.dimension, authorized_collection_set=["cooking"])
    assert chosen == ["cooking"] and tokens == 0 and server.call_count == 0


def test_a_subclass_retrieve_changes_what_query_answers_from(server, store, embedding) -> None:
    own = RetrievalResult(embedding=None, text="The moon is made of basalt.", reference="moon.txt", metadata={})

    class MyRAG(NaiveRAG):
        def retrieve(self, query: str, **kwargs: Any) -> tuple[list[RetrievalResult], int, dict[str, Any]]:
            self.seen = kwargs
            return [own], 7, {}

    for cls, final_prompt in (
        (MyRAG, ANSWER),
        (type("MyChain", (ChainOfRAG,), {"retrieve": MyRAG.retrieve}), CHAIN_FINAL_PROMPT),
    ):
        server.reset()
        server.on(ANSWER, "Basalt [1].")
        server.on("step-by-step findings", "Basalt [1].")
        agent = cls(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
        answer, results, tokens = agent.query("What is the moon made of?", tenant_id="t1")
        assert results == [own] and answer.startswith("Basalt") and tokens > 7
        assert "The moon is made of basalt." in last_request(server, final_prompt).last_user_message
        assert agent.seen["tenant_id"] == "t1"
    assert not store.searches, "the override replaced our retrieval"


def test_a_users_collection_router_invoke_is_used_within_the_authorized_set(server, store, embedding) -> None:
    class Picky(CollectionRouter):
        def invoke(self, query: str, dim: int | None = None, **kwargs: Any) -> tuple[list[str], int]:
            self.kwargs = kwargs
            return ["science", "cooking"], 3

    server.on(ANSWER, "Hopper [1].")
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    agent.collection_router = Picky(llm=agent.llm, vector_db=store, dim=embedding.dimension)
    result = agent.query_result("Who built the first compiler?", authorized_collection_set={"science"})
    assert searched(store) == {"science"}
    assert agent.collection_router.kwargs["authorized_collection_set"] == {"science"}
    assert result.usage_by_step["collection_routing"].total_tokens == 3


def test_route_collection_off_searches_every_permitted_collection_without_the_llm(server, store, embedding) -> None:
    server.on(ANSWER, "Both [1].")
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, route_collection=False)
    agent.query("bread and compilers")
    assert searched(store) == {"science", "cooking"}, "the empty collection is skipped"
    assert server.call_count == 2, "the answer's extraction and the answer, no routing call"


def test_when_the_router_picks_nothing_all_permitted_collections_are_searched_and_said(
    server, store, embedding, caplog: pytest.LogCaptureFixture
) -> None:
    server.on(ROUTER, "[]")
    server.on(ANSWER, "Found [1].")
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    with caplog.at_level(logging.WARNING, logger="deepsearcher.agent"):
        result = agent.query_result("Something unusual")
    event = next(step for step in result.steps if step.kind == "collections")
    assert event.data["fallback"] == "router_picked_none" and sorted(event.data["collections"]) == [
        "cooking",
        "science",
    ]
    assert searched(store) == {"science", "cooking"}
    assert "picked no collection" in caplog.text


def test_nothing_to_search_only_when_nothing_permitted_is_loaded(server, store, embedding) -> None:
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    with pytest.raises(NoSearchableDataError, match="nothing is loaded in collection 'empty'"):
        agent.query("bread", authorized_collection_set={"empty"})
    assert server.call_count == 0


def test_the_cli_query_searches_all_when_the_router_picks_none(server, store, embedding, tmp_path: Path) -> None:
    import yaml
    from typer.testing import CliRunner

    from deepsearcher.cli.main import app

    uri = store.uri
    store.close()
    config = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {
            "llm": server.llm_config(**FAST),
            "vector_db": {"provider": "Milvus", "config": {"uri": uri}},
        }
    }
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    server.on(ROUTER, "[]")
    server.on(ANSWER, "Grace Hopper [1].")
    result = CliRunner().invoke(app, ["query", "Who built the first compiler?", "--agent", "naive", "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "Grace Hopper" in result.output and "Nothing to search" not in result.output
    assert "the router picked none: searching every permitted collection" in " ".join(result.output.split())


def test_a_chat_set_on_the_llm_instance_serves_every_agent_call(server, store, embedding) -> None:
    """DeepSearcher users wrap or replace `llm.chat` on the instance; the agent's calls (the streamed
    answer included) go through it, with the `messages=` keyword, and a wrapper calling the
    original reaches the provider instead of looping."""
    server.on(ANSWER, "Grace Hopper [1].")
    llm = server.llm(**FAST)
    original = llm.chat
    seen: list[str] = []

    def wrapper(messages: list[dict[str, str]], **kwargs: Any) -> Any:
        seen.append(messages[0]["content"])
        return original(messages)

    llm.chat = wrapper  # type: ignore[method-assign]
    agent = NaiveRAG(llm=llm, embedding_model=embedding, vector_db=store, route_collection=False)
    answer, _, tokens = agent.query("Who built the first compiler?")
    assert answer.startswith("Grace Hopper") and tokens > 0
    assert len(seen) == 2 and seen[1].startswith(ANSWER) and server.call_count == 2  # extraction, answer


def test_a_subclass_async_retrieve_and_the_step_methods(server, store, embedding) -> None:
    own = RetrievalResult(embedding=None, text="The moon is made of basalt.", reference="moon.txt", metadata={})

    class MyDeep(DeepSearch):
        async def async_retrieve(self, query: str, **kwargs: Any) -> tuple[list[RetrievalResult], int, dict[str, Any]]:
            self.seen = kwargs
            return [own], 4, {}

    server.on(ANSWER, "Basalt [1].")
    agent = MyDeep(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    answer, results, tokens = agent.query("What is the moon made of?", tenant_id="t1", max_iter=1)
    assert results == [own] and answer.startswith("Basalt") and tokens > 4
    assert agent.seen == {"tenant_id": "t1", "max_iter": 1}, "only what the caller gave"

    server.on("Break the question below", '["Who built A-0?", "When?"]')
    deep = DeepSearch(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    queries, used = deep._generate_sub_queries("Who built A-0 and when?")
    assert queries == ["Who built A-0?", "When?"] and used > 0
    server.on(ROUTER, '["science"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    kept, used = run_sync(deep._search_chunks_from_vectordb("Who built A-0?", ["Who built A-0?"]))
    assert kept and all("Hopper" in r.text for r in kept) and used > 0


def test_chain_step_methods_of_a_subclass_run_upstreams_loop(server, store, embedding) -> None:
    """Upstream's ChainOfRAG was extended through its four step methods: a subclass overriding them
    gets upstream's loop over them (tokens summed, its intermediate context the final answer's
    findings), with the caller's tenant reaching the search step."""
    grace = RetrievalResult(embedding=None, text="Grace Hopper built the first compiler.", reference="a.txt")

    class MyChain(ChainOfRAG):
        def _reflect_get_subquery(self, query: str, intermediate_context: list[str], **kw: Any) -> tuple[str, int]:
            return "Who built the first compiler?", 3

        def _retrieve_and_answer(self, query: str, **kw: Any) -> tuple[str, list[RetrievalResult], int]:
            self.keywords = kw
            return "Grace Hopper", [grace], 4

        def _get_supported_docs(self, results: list[RetrievalResult], query: str, answer: str, **kw: Any) -> Any:
            return list(results), 5

        def _check_has_enough_info(self, query: str, contexts: list[str], **kw: Any) -> tuple[bool, int]:
            return len(contexts) >= 2, 6

    agent = MyChain(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store, early_stopping=True, max_iter=3)
    results, tokens, metadata = agent.retrieve("Who built the first compiler?", tenant_id="t1")
    assert results == [grace] and tokens == 2 * (3 + 4 + 5 + 6)
    assert metadata["intermediate_context"][1] == "Intermediate query2: Who built the first compiler?\n" + (
        "Intermediate answer2: Grace Hopper"
    )
    assert agent.keywords == {"tenant_id": "t1"} and server.call_count == 0

    server.on("Answer the question using the step-by-step findings", "Answer: Grace Hopper\nGrace Hopper built it [1].")
    answer, results, _ = agent.query("Who built the first compiler?", max_iter=1)
    assert "Grace Hopper" in answer
    assert results == [grace]
    assert "Intermediate answer1: Grace Hopper" in last_request(server, CHAIN_FINAL_PROMPT).prompt_text


def test_a_models_own_literal_eval_reads_what_our_parser_cannot(server, store, embedding) -> None:
    """Upstream's agents parsed lists with `llm.literal_eval`; a model whose replies need the user's
    own reading (here: passage numbers written as words) still picks the supporting passages."""
    llm = server.llm(**FAST)
    llm.literal_eval = lambda text: [["zero", "one", "two"].index(word) for word in text.split()]  # type: ignore[method-assign]
    agent = ChainOfRAG(llm=llm, embedding_model=embedding, vector_db=store)
    results = [RetrievalResult(embedding=None, text=f"passage {i}", reference=f"{i}.txt") for i in range(3)]
    server.on("", "zero two")
    kept, tokens = agent._get_supported_docs(results, "Which passages?", "Some answer")
    assert [result.reference for result in kept] == ["0.txt", "2.txt"] and tokens > 0
    assert server.call_count == 1, "read on the first reply: no repair retry"


def test_a_wrong_collection_name_is_answered_as_the_query_service_answers_it(server, store, embedding) -> None:
    """One `searchable_collections` for the agents and the use cases: an agent used directly names a
    missing collection and lists the existing ones, before any LLM call, as `deepsearcher query` does."""
    from deepsearcher.agent import searchable
    from deepsearcher.app import querying, searching
    from deepsearcher.types.errors import CollectionNotFoundError

    assert querying.searchable_collections is searchable.searchable_collections is searching.searchable_collections
    agent = NaiveRAG(llm=server.llm(**FAST), embedding_model=embedding, vector_db=store)
    missing = r"'sciense' does not exist \(existing: cooking, empty, science\)"
    with pytest.raises(CollectionNotFoundError, match=missing):
        agent.query("Who built the first compiler?", collections=["sciense"])
    assert server.call_count == 0
