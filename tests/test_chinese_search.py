"""Chinese text through the default BM25 analyzer (jieba) in a real Milvus Lite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepsearcher.types import Chunk
from deepsearcher.vector_db.milvus import DEFAULT_ANALYZER, PROP_ANALYZER, Milvus

DATA = Path(__file__).parent / "data" / "chinese"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _load(store: Milvus, collection: str, embedding) -> None:
    chunks = [
        Chunk(text=row["text"], reference=row["title"], metadata={"title": row["title"]})
        for row in _rows("corpus.jsonl")
    ]
    embedding.embed_chunks(chunks, show_progress=False)
    store.init_collection(embedding.dimension, collection, embedding_model=embedding.model_name)
    store.insert_data(collection, chunks)


@pytest.fixture
def store(milvus_uri: str):
    db = Milvus(uri=milvus_uri)
    yield db
    db.close()


def test_bm25_answers_every_chinese_question_with_the_default_analyzer(store: Milvus, embedding) -> None:
    _load(store, "zh", embedding)
    questions = _rows("questions.jsonl")
    top1 = 0
    for question in questions:
        hits = store.search_data(
            "zh", embedding.embed_query(question["question"]), top_k=3, query_text=question["question"], mode="sparse"
        )
        assert hits, f"BM25 found nothing for {question['question']}"
        top1 += hits[0].metadata["title"] == question["gold_titles"][0]
    assert top1 / len(questions) >= 0.9


def test_hybrid_top1_on_chinese_is_at_least_90_percent(store: Milvus, embedding) -> None:
    _load(store, "zh", embedding)
    questions = _rows("questions.jsonl")
    right = sum(
        store.search_data("zh", embedding.embed_query(q["question"]), top_k=1, query_text=q["question"], mode="hybrid")[
            0
        ].metadata["title"]
        == q["gold_titles"][0]
        for q in questions
    )
    assert right / len(questions) >= 0.9


def test_analyzer_is_stored_and_an_existing_collection_keeps_its_own(milvus_uri: str, embedding) -> None:
    old = Milvus(uri=milvus_uri, analyzer="standard")
    _load(old, "legacy", embedding)
    assert json.loads(old._describe("legacy")["properties"][PROP_ANALYZER]) == {"tokenizer": "standard"}
    old.close()
    reopened = Milvus(uri=milvus_uri)  # default analyzer now jieba: the old schema still rules
    question = "大熊猫每天吃多少竹子？"
    reopened.init_collection(embedding.dimension, "legacy", embedding_model=embedding.model_name)
    assert (
        reopened.search_data("legacy", embedding.embed_query(question), top_k=3, query_text=question, mode="sparse")
        == []
    )
    _load(reopened, "fresh", embedding)
    assert json.loads(reopened._describe("fresh")["properties"][PROP_ANALYZER]) == DEFAULT_ANALYZER
    hits = reopened.search_data("fresh", embedding.embed_query(question), top_k=3, query_text=question, mode="sparse")
    assert hits and hits[0].metadata["title"] == "大熊猫"
    reopened.close()
