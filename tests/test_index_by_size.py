"""Milvus Lite chooses its dense index by size (issue #33): exact search while a collection is
small, HNSW once it holds `index_switch_rows` rows, declared without releasing the collection
and persisted beside the segments. A small threshold stands in for the real one."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deepsearcher.types import Chunk
from deepsearcher.vector_db.milvus import Milvus

DIM = 32


def chunks(rng: np.random.Generator, start: int, count: int) -> list[Chunk]:
    vectors = rng.standard_normal((count, DIM)).astype("float32")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        Chunk(text=f"row {start + i}", reference=f"doc{start + i}.txt", embedding=vector.tolist(), metadata={})
        for i, vector in enumerate(vectors)
    ]


def test_the_index_becomes_hnsw_past_the_threshold_and_stays(tmp_path: Path) -> None:
    uri = str(tmp_path / "milvus.db")
    rng = np.random.default_rng(7)
    first = chunks(rng, 0, 200)
    with Milvus(uri=uri, index_switch_rows=300) as store:
        store.init_collection(DIM, "grows", embedding_model="random")
        store.insert_data("grows", first)
        assert store.fit_index("grows") is None  # 200 rows: exact search
        assert store.dense_index("grows") == "NONE"
        store.insert_data("grows", chunks(rng, 200, 200))
        assert store.fit_index("grows") == "HNSW"
        assert store.dense_index("grows") == "HNSW"
        assert store.fit_index("grows") is None  # declared once
        hits = store.search_data("grows", first[17].embedding, top_k=3, mode="dense")
        assert hits[0].reference == "doc17.txt"

    sidecars = list((tmp_path / "milvus.db").glob("**/indexes/*.idx"))
    assert sidecars, "the HNSW graphs are written beside the segments"
    with Milvus(uri=uri, index_switch_rows=300) as reopened:
        assert reopened.dense_index("grows") == "HNSW"
        hits = reopened.search_data("grows", first[42].embedding, top_k=3, mode="dense")
        assert hits[0].reference == "doc42.txt"


def test_an_explicit_index_type_is_kept(tmp_path: Path) -> None:
    with Milvus(uri=str(tmp_path / "milvus.db"), index_type="FLAT", index_switch_rows=10) as store:
        store.init_collection(DIM, "exact", embedding_model="random")
        store.insert_data("exact", chunks(np.random.default_rng(1), 0, 50))
        assert store.fit_index("exact") is None
        assert store.dense_index("exact") == "FLAT"


def test_a_flat_collection_past_the_threshold_switches_to_hnsw_on_the_next_load(tmp_path: Path) -> None:
    uri = str(tmp_path / "milvus.db")
    rows = chunks(np.random.default_rng(3), 0, 400)
    with Milvus(uri=uri, index_type="FLAT", index_switch_rows=300) as store:  # as collections were made before AUTO
        store.init_collection(DIM, "old", embedding_model="random")
        store.insert_data("old", rows)
        assert store.fit_index("old") is None
        assert store.dense_index("old") == "FLAT"
    with Milvus(uri=uri, index_switch_rows=300) as store:  # the next load, under AUTO
        before = store.search_data("old", rows[42].embedding, top_k=3, mode="dense")
        assert store.fit_index("old") == "HNSW"
        assert store.dense_index("old") == "HNSW"
        assert store._metric("old") == "COSINE"
        after = store.search_data("old", rows[42].embedding, top_k=3, mode="dense")
        assert [hit.reference for hit in after] == [hit.reference for hit in before]
        assert after[0].reference == "doc42.txt"
