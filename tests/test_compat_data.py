"""A DeepSearcher user's existing store: a Milvus Lite file given as "./milvus.db" and a
collection created with DeepSearcher's schema (auto-id INT64, `embedding` with an L2
index, `text`, `reference`, `metadata`, description in the schema, no properties of ours)
is searched and loaded into; the model guard says "unknown model" once, not a refusal."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from helpers import DISTRACTORS, TARGET, make_docs

from deepsearcher import configuration
from deepsearcher.config import Configuration

DIM = 384


def build_upstream_collection(uri: str, embedding, texts: list[str]) -> None:
    """What DeepSearcher's Milvus.init_collection + insert_data create (non-hybrid)."""
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(uri)
    schema = client.create_schema(enable_dynamic_field=False, auto_id=True, description="Laptop support notes")
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("text", DataType.VARCHAR, max_length=65_535)
    schema.add_field("reference", DataType.VARCHAR, max_length=2048)
    schema.add_field("metadata", DataType.JSON)
    index = client.prepare_index_params()
    index.add_index(field_name="embedding", index_type="AUTOINDEX", metric_type="L2")
    client.create_collection("support", schema=schema, index_params=index, consistency_level="Strong")
    vectors = embedding.embed_documents(texts)
    client.insert(
        "support",
        [
            {"embedding": v, "text": t, "reference": "notes.txt", "metadata": {}}
            for v, t in zip(vectors, texts, strict=False)
        ],
    )
    client.flush("support")
    assert client.describe_collection("support")["properties"] == {}
    client.close()


@pytest.fixture
def upstream_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedding) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    build_upstream_collection(str(tmp_path / "milvus.db"), embedding, [TARGET, *DISTRACTORS])
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump({"provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": "./milvus.db"}}}})
    )
    configuration.init_config(config=Configuration(config_path="config.yaml"))
    yield tmp_path
    configuration.vector_db.close()


def test_relative_uri_is_the_file_where_they_run(upstream_store: Path) -> None:
    assert configuration.vector_db.uri == str(upstream_store / "milvus.db")
    assert [info.collection_name for info in configuration.vector_db.list_collections()] == ["support"]


def test_upstream_collection_is_searched_with_one_unknown_model_warning(upstream_store: Path, caplog) -> None:
    from deepsearcher.online_query import naive_retrieve

    with caplog.at_level(logging.WARNING, logger="deepsearcher"):
        first = naive_retrieve("firmware patch closed the memo ticket", collection="support", top_k=2)
        second = naive_retrieve("notebook does not boot", collection="support", top_k=3)
    assert first[0].text == TARGET and first[0].reference == "notes.txt"
    assert first[0].score > first[1].score and 0.0 < first[0].score <= 1.0001  # L2 mapped to a similarity
    assert {result.text for result in second} <= set(DISTRACTORS)
    warnings = [r.getMessage() for r in caplog.records if "unknown model" in r.getMessage()]
    assert len(warnings) == 1 and "support" in warnings[0]


def test_ours_loads_into_the_upstream_collection(upstream_store: Path) -> None:
    from deepsearcher.offline_loading import load_from_local_files
    from deepsearcher.online_query import naive_retrieve

    docs = make_docs(upstream_store / "docs")
    summary = load_from_local_files(
        paths_or_directory=str(docs / "volcano.md"), collection_name="support", batch_size=16
    )
    assert summary.ok and summary.chunks_inserted == 1
    store = configuration.vector_db
    assert store.count("support") == 1 + 1 + len(DISTRACTORS)
    assert sorted(Path(ref).name for ref in store.list_sources("support")) == ["notes.txt", "volcano.md"]
    hit = naive_retrieve("Krafla caldera eruptions in Iceland", collection="support", top_k=1)[0]
    assert hit.reference.endswith("volcano.md")
