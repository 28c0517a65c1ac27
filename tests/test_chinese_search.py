"""Chinese text through the default BM25 analysis in a real Milvus Lite store: jieba's words,
cut by us before Milvus Lite's regex tokenizer (new collections) or by its jieba tokenizer
(collections made before), and the same tokens either way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deepsearcher.types import Chunk
from deepsearcher.vector_db.milvus import DEFAULT_ANALYZER, LITE_DEFAULT_ANALYZER, PROP_ANALYZER, Milvus
from deepsearcher.vector_db.word_segmentation import segment_chinese

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
    default = LITE_DEFAULT_ANALYZER if reopened.is_lite else DEFAULT_ANALYZER
    assert json.loads(reopened._describe("fresh")["properties"][PROP_ANALYZER]) == default
    hits = reopened.search_data("fresh", embedding.embed_query(question), top_k=3, query_text=question, mode="sparse")
    assert hits and hits[0].metadata["title"] == "大熊猫"
    reopened.close()


def test_a_collection_made_with_the_jieba_tokenizer_still_answers(milvus_uri: str, embedding) -> None:
    """Collections created before the default changed analyse with Milvus Lite's own jieba
    tokenizer; their queries must not be cut again (the schema says which kind a collection is)."""
    before = Milvus(uri=milvus_uri, analyzer=DEFAULT_ANALYZER)
    _load(before, "jieba_made", embedding)
    questions = _rows("questions.jsonl")
    top1 = sum(
        before.search_data(
            "jieba_made", embedding.embed_query(q["question"]), top_k=1, query_text=q["question"], mode="sparse"
        )[0].metadata["title"]
        == q["gold_titles"][0]
        for q in questions
    )
    before.close()
    assert top1 / len(questions) >= 0.9


def test_cutting_first_gives_the_jieba_tokenizers_tokens() -> None:
    """The same BM25 tokens as Milvus Lite's jieba tokenizer with our punctuation filter, on
    Chinese mixed with English words and digits (Milvus Lite's own analyzers, no store)."""
    from milvus_lite.analyzer.factory import create_analyzer

    text = "大熊猫主要生活在中国四川，每天吃12到38公斤竹子。Giant pandas eat bamboo（竹子）for 14 hours!"
    by_jieba = create_analyzer(DEFAULT_ANALYZER).tokenize(text)
    cut_then_regex = create_analyzer(LITE_DEFAULT_ANALYZER).tokenize(segment_chinese(text))
    assert "熊猫" in by_jieba and "bamboo" in by_jieba
    assert sorted(cut_then_regex) == sorted(by_jieba)


def test_text_without_chinese_never_loads_jieba() -> None:
    """English-only loads and searches skip jieba altogether (its dictionary takes ~1 s)."""
    code = (
        "import sys; from deepsearcher.vector_db.word_segmentation import segment_chinese; "
        "out = segment_chinese('Giant pandas eat bamboo, 12-38 kg a day.'); "
        "print(out, 'jieba' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "Giant pandas eat bamboo, 12-38 kg a day. False"
