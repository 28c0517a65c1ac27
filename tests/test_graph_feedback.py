"""After the walk, the keyword feedback search lifts the chunk that *mentions* a bridge name (the
graph only reaches chunks *titled* by one); the title rows the walk looks up are read once per
store state and re-read after any write, by any store object on the same Lite database. Real
Milvus Lite and the bundled model."""

from __future__ import annotations

from pathlib import Path

from deepsearcher.graph.feedback import FeedbackSettings, feedback_names
from deepsearcher.types import Chunk, RetrievalResult
from deepsearcher.vector_db.milvus import Milvus

QUESTION = "How many river districts does the town where Orla Vantresk died have?"
PASSAGES = {
    "Orla Vantresk": "Orla Vantresk was a painter and illustrator of children's books. She died in Kelmora in 1902.",
    # the answer: titled by no name any chunk mentions, so no graph edge leads here
    "River districts of the north": "Kelmora has 4 river districts.",
    # close to the question in meaning, in other words
    "Port Hessel": "The port where the artist Hanne Solberg passed away counts nine river districts.",
    "Vell": "The village in which the sculptor Ivo Marr perished has two river districts.",
    "Saltby": "Saltby, the hamlet where a famous watercolourist passed away, has six river districts.",
    "Harbour painters": "Harbour painters worked in coastal towns and sold seascapes to sailors.",
    "Children's books": "Children's books were often illustrated by painters who also made posters.",
}
TITLE_OF_ANSWER = "River districts of the north"


def _store_with(path: Path, embedding, **options: bool) -> Milvus:
    store = Milvus(uri=str(path), **options)
    chunks = [Chunk(text=text, reference=f"{title}.txt", metadata={"title": title}) for title, text in PASSAGES.items()]
    embedding.embed_chunks(chunks, show_progress=False)
    store.init_collection(embedding.dimension, "towns", embedding_model=embedding.model_name)
    store.insert_data("towns", chunks)
    return store


def _titles(store: Milvus, embedding, top_k: int = 3) -> list[str]:
    hits = store.search_data("towns", embedding.embed_query(QUESTION), top_k=top_k, query_text=QUESTION)
    return [hit.metadata["title"] for hit in hits]


def test_feedback_names_leave_out_the_question_and_the_chunk_own_title():
    hits = [
        RetrievalResult(None, PASSAGES["Orla Vantresk"], "o.txt", {"title": "Orla Vantresk"}, 1.0),
        RetrievalResult(None, "Kelmora lies on the Vey, below Mount Aster.", "k.txt", {"title": "Kelmora"}, 0.9),
    ]
    assert feedback_names(QUESTION, hits, FeedbackSettings()) == ["Kelmora", "Vey", "Mount Aster"]
    assert feedback_names(QUESTION, hits, FeedbackSettings(seeds=1)) == ["Kelmora"]
    assert feedback_names(QUESTION, hits, FeedbackSettings(names=2)) == ["Kelmora", "Vey"]


def test_the_feedback_search_lifts_the_chunk_that_mentions_the_bridge_name(tmp_path: Path, embedding):
    with _store_with(tmp_path / "towns.db", embedding, graph_feedback=False) as store:
        without = _titles(store, embedding, top_k=2)  # the walk alone: Kelmora titles no chunk, nothing leads there
        assert without == ["Orla Vantresk", "Saltby"]
        store.graph_feedback = True
        # a full weight, so that seven short passages show what a tenth of a rank does on a real corpus
        store.feedback_settings = FeedbackSettings(weight=1.0)
        assert _titles(store, embedding, top_k=2) == ["Orla Vantresk", TITLE_OF_ANSWER]
        store.delete_by_reference("towns", "Orla Vantresk.txt")  # no chunk names the bridge any more
        assert TITLE_OF_ANSWER not in _titles(store, embedding, top_k=2)


def test_title_rows_are_read_once_and_again_after_a_write_by_another_store_object(tmp_path: Path, embedding):
    path = tmp_path / "rows.db"
    vector = embedding.embed_query(QUESTION)
    with _store_with(path, embedding) as store:
        titled = store._titled("towns", ["Orla Vantresk", "Kelmora"], vector, None)
        assert [hit.metadata["title"] for hit in titled] == ["Orla Vantresk"] and store._title_rows.read == 2
        first = _titles(store, embedding)
        read = store._title_rows.read
        assert _titles(store, embedding) == first and store._title_rows.read == read  # the same names: none read again
        assert store._title_rows.hits > 0
        with Milvus(uri=str(path)) as other:  # the same database through another store object
            other.delete_by_reference("towns", "Orla Vantresk.txt")
        assert store._titled("towns", ["Orla Vantresk"], vector, None) == []  # the write moved the count: read again
        assert store._title_rows.read > read
