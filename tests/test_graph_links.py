"""Entity links (deepsearcher/graph): the second hop of a multi-hop question, found through
the names the first hop's chunk mentions, on real Milvus Lite and the Milvus 2.3.5 server."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ANSWER_PROMPT, FAST_RETRIES, JUDGE_PROMPT, SUB_QUERIES_PROMPT

from deepsearcher.agent import DeepSearch
from deepsearcher.graph import follow_links, mentions, normalise
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types import Chunk, RetrievalResult
from deepsearcher.vector_db.milvus import Milvus

QUESTION = "Where was the director of Polish Wedding born?"
PASSAGES = {
    "Polish Wedding": "Polish Wedding is a 1998 American comedy-drama film written and directed by Theresa Connelly.",
    "Theresa Connelly": "Theresa Connelly is an American screenwriter and film director, born in Philadelphia.",
    "Polish wedding customs": (
        "A Polish wedding traditionally lasts two days; the film of the day is made by a hired director."
    ),
    "Wedding films": "Many films about weddings were directed in the 1990s; most directors were born in big cities.",
    "Polish cinema": "Polish cinema has produced many directors; several were born in Łódź, where the film school is.",
    "Born Free": "Born Free is a 1966 British drama film about a lioness, directed by James Hill.",
}


def test_mentions_are_capitalised_runs_without_sentence_openers():
    text = 'Demon Dice was created by Lester Smith and Tim Brown. In it, the University of Texas and "Big Fish" appear.'
    assert mentions(text) == [
        "Demon Dice",
        "Lester Smith and Tim Brown",  # a name may hold "and" ("Pride and Prejudice"): the whole and its parts
        "Lester Smith",
        "Tim Brown",
        "University of Texas",
        "Big Fish",
    ]
    assert normalise("The Beatles") == normalise("beatles") and normalise("Café Müller") == "cafe muller"


def test_links_only_raise_chunks_and_leave_a_list_without_names_alone():
    hits = [RetrievalResult(None, t, f"{i}.txt", {"title": f"t{i}"}, 1.0) for i, t in enumerate(["a b", "c d"])]
    assert follow_links("plain words only", hits, lambda names: pytest.fail(f"looked up {names}"), 2) == hits


def _load(store: Milvus, embedding, collection: str, titles: list[str]) -> None:
    chunks = [Chunk(text=PASSAGES[t], reference=f"{t}.txt", metadata={"title": t}) for t in titles]
    embedding.embed_chunks(chunks, show_progress=False)
    store.insert_data(collection, chunks)


def _titles(store: Milvus, embedding, collection: str, top_k: int, **kwargs) -> list[str]:
    vector = embedding.embed_query(QUESTION)
    hits = store.search_data(collection, vector, top_k=top_k, query_text=QUESTION, **kwargs)
    return [hit.metadata["title"] for hit in hits]


def test_the_second_hop_is_found_and_follows_loads_and_deletes(tmp_path: Path, embedding):
    # the links alone: the keyword feedback after them (tests/test_graph_feedback.py) re-weighs seven passages'
    # BM25 statistics after a delete and a reload
    with Milvus(uri=str(tmp_path / "graph.db"), graph_feedback=False) as store:
        store.init_collection(embedding.dimension, "films", embedding_model=embedding.model_name)
        _load(store, embedding, "films", list(PASSAGES))
        without = _titles(store, embedding, "films", 3, links=False)
        assert "Theresa Connelly" not in without  # nothing in her chunk matches the question's words
        assert set(_titles(store, embedding, "films", 2)) == {"Polish Wedding", "Theresa Connelly"}  # on by default
        store.delete_by_reference("films", "Theresa Connelly.txt")
        assert "Theresa Connelly" not in _titles(store, embedding, "films", 6)  # no edge outlives its chunk
        _load(store, embedding, "films", ["Theresa Connelly"])  # an incremental load brings it back
        assert set(_titles(store, embedding, "films", 2)) == {"Polish Wedding", "Theresa Connelly"}
    with Milvus(uri=str(tmp_path / "graph.db"), graph=False) as switched_off:
        assert _titles(switched_off, embedding, "films", 3) == without


def test_links_work_on_the_dense_only_milvus_235_server(milvus_servers, embedding):
    with Milvus(uri=milvus_servers.get("milvus-2.3.5").uri) as store:
        store.init_collection(
            embedding.dimension, "films235", embedding_model=embedding.model_name, force_new_collection=True
        )
        _load(store, embedding, "films235", list(PASSAGES))
        assert set(_titles(store, embedding, "films235", 2)) == {"Polish Wedding", "Theresa Connelly"}


server = scripted_llm_fixture(name="server", fallback="NO")


def test_deep_search_searches_the_names_its_kept_passages_give(server, tmp_path: Path, embedding):
    """The reflection asks for nothing new; the director's name from the kept passage is searched anyway."""
    server.on(SUB_QUERIES_PROMPT, '["Polish Wedding director"]')
    server.on(JUDGE_PROMPT, lambda request: "YES" if "Polish Wedding is" in request.last_user_message else "NO")
    server.on("These queries were already searched", "[]")
    server.on(ANSWER_PROMPT, "Philadelphia [1].")
    with Milvus(uri=str(tmp_path / "deep.db")) as store:
        store.init_collection(embedding.dimension, "films", embedding_model=embedding.model_name)
        _load(store, embedding, "films", list(PASSAGES))
        agent = DeepSearch(llm=server.llm(**FAST_RETRIES), embedding_model=embedding, vector_db=store, max_iter=2)
        result = agent.query_result(QUESTION)
    second = [step.data["query"] for step in result.steps if step.kind == "search" and step.data["iteration"] == 2]
    assert "Theresa Connelly" in second
