"""The Milvus Lite speed-up (deepsearcher/vector_db/_milvus_lite_speed.py) returns exactly what
milvus-lite's own search paths return: the same ids, distances and fields, on one real Milvus
Lite database that holds several flushed segments, upserted keys (old versions in older
segments), flushed and pending deletes, and unflushed rows; dense (exact and HNSW), filtered,
BM25 and hybrid searches. Both paths run in this process, one after the other."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deepsearcher.vector_db import _milvus_lite_speed as speed

DIM = 16
WORDS = "amber basalt cedar dune ember fjord garnet harbor iris juniper kelp lantern".split()


def rows(rng: np.random.Generator, pks: range, version: int) -> list[dict[str, Any]]:
    vectors = rng.standard_normal((len(pks), DIM)).astype("float32")
    out = []
    for pk, vector in zip(pks, vectors, strict=True):
        words = " ".join(WORDS[int(i)] for i in rng.zipf(1.5, 6) % len(WORDS))
        out.append({"pk": pk, "vec": vector.tolist(), "text": f"{words} tok{pk} v{version}", "tag": f"t{pk % 3}"})
    return out


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One database: 3 flushed segments, upserts across them, flushed and pending deletes, unflushed rows."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    uri = str(Path(tmp_path_factory.mktemp("lite_speed")) / "milvus.db")
    client = MilvusClient(uri=uri)
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("text", DataType.VARCHAR, max_length=512, enable_analyzer=True)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("tag", DataType.VARCHAR, max_length=16)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                 output_field_names=["sparse"]))  # fmt: skip
    index = client.prepare_index_params()
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection("c", schema=schema, index_params=index)
    client.create_collection("h", schema=schema, index_params=index)
    rng = np.random.default_rng(3)
    for name in ("c", "h"):
        client.insert(name, rows(rng, range(0, 300), 1))
        client.flush(name)
        client.insert(name, rows(rng, range(300, 600), 1))
        client.flush(name)
        client.upsert(name, rows(rng, range(100, 160), 2))  # newer versions of keys in segment 1
        client.delete(name, ids=list(range(400, 420)))
        client.flush(name)
        client.upsert(name, rows(rng, range(500, 510), 3))  # unflushed: the memtable
        client.insert(name, rows(rng, range(600, 640), 1))
        client.delete(name, ids=[0, 1, 2, 601, 130])  # pending deletes of flushed and unflushed keys
    hnsw = client.prepare_index_params()
    hnsw.add_index("vec", index_type="HNSW", metric_type="COSINE", params={"M": 8, "efConstruction": 64})
    client.create_index("h", hnsw, sync=False)  # sync waits on AllocTimestamp, which Lite lacks
    yield client
    speed.uninstall()
    client.close()


def stored_segments() -> Iterator[Any]:
    """The segments of every collection open in this process (milvus-lite runs in-process)."""
    from milvus_lite.server_manager import server_manager_instance

    for _, db, _ in server_manager_instance._servers.values():
        for collection in db._collections.values():
            yield from collection._segment_cache.values()


def searches(client: Any) -> list[Any]:
    rng = np.random.default_rng(11)
    queries = rng.standard_normal((6, DIM)).astype("float32").tolist()
    texts = ["amber cedar", "lantern kelp tok130", "tok505 v3", "dune", "tok0 amber", "garnet iris juniper"]
    out: list[Any] = []
    for name in ("c", "h"):
        fields = ["pk", "text", "tag"]
        out.append(client.search(name, data=queries, anns_field="vec", limit=12, output_fields=fields))
        out.append(client.search(name, data=queries, anns_field="vec", limit=8, filter='tag == "t1"',
                                 output_fields=fields))  # fmt: skip
        out.append(client.search(name, data=texts, anns_field="sparse", limit=10, output_fields=fields,
                                 search_params={"metric_type": "BM25"}))  # fmt: skip
        out.append(client.search(name, data=texts, anns_field="sparse", limit=5, filter="pk > 100",
                                 output_fields=fields, search_params={"metric_type": "BM25"}))  # fmt: skip
        from pymilvus import AnnSearchRequest, RRFRanker

        requests = [
            AnnSearchRequest(data=queries[:2], anns_field="vec", param={"metric_type": "COSINE"}, limit=20),
            AnnSearchRequest(data=texts[:2], anns_field="sparse", param={"metric_type": "BM25"}, limit=20),
        ]
        out.append(client.hybrid_search(name, requests, RRFRanker(60), limit=10, output_fields=fields))
    return [[[(hit["pk"], hit["distance"], dict(hit["entity"])) for hit in hits] for hits in result] for result in out]


def test_results_equal_milvus_lite_own_search_paths(client: Any) -> None:
    speed.uninstall()
    expected = searches(client)
    assert speed.forget_bm25_indexes() >= 6, "each collection's 3 segments had a scalar BM25 index"
    assert speed.install()
    got = searches(client)
    assert got == expected
    assert any(
        isinstance(index, speed._array_index_class())
        for segment in stored_segments()
        for index in segment.sparse_indexes.values()
    ), "the segments' BM25 indexes were built as arrays"

    found = {hit[0] for result in got for hits in result for hit in hits}
    assert found, "the searches return rows"
    assert not found & {0, 1, 2, 601, 130, *range(400, 420)}, "deleted keys are never returned"
    texts = {hit[0]: hit[2]["text"] for result in got for hits in result for hit in hits}
    assert all(texts[pk].endswith(" v2") for pk in range(100, 160) if pk in texts), "upserts show their newest version"
    assert all(texts[pk].endswith(" v3") for pk in range(500, 510) if pk in texts)
    assert speed.LIVE_ROWS._entries, "the fast path ran (it would fall back silently otherwise)"
    computed = speed.LIVE_ROWS.computed
    assert searches(client) == expected
    assert speed.LIVE_ROWS.computed == computed, "no write in between: dense, BM25 and hybrid reuse the masks"


def test_a_write_between_searches_is_seen(client: Any) -> None:
    assert speed.install()
    rng = np.random.default_rng(5)
    before = searches(client)
    client.delete("c", ids=[5])
    client.upsert("c", rows(rng, range(7, 8), 4))
    after = searches(client)
    speed.uninstall()
    assert after == searches(client), "the cached masks were recomputed for the new state"
    assert after != before
    seen = {hit[0]: hit[2]["text"] for hits in after[0] + after[2] for hit in hits}
    assert 5 not in seen


def test_bm25_scores_equal_the_scalar_code() -> None:
    from milvus_lite.index.sparse_inverted import SparseInvertedIndex

    rng = np.random.default_rng(2)
    docs = [{int(t): float(c) for t, c in zip(rng.integers(0, 30, 8), rng.integers(1, 4, 8), strict=True)}
            for _ in range(400)]  # fmt: skip
    docs[17] = {}
    fractional = [{term: tf / 3.0 for term, tf in doc.items()} for doc in docs]  # tfs float32 cannot hold
    queries = [{3: 1.0, 9: 1.0}, {29: 1.0}, {}, {1: 1.0, 2: 0.5, 3: 1.0, 99: 1.0}, {5: 2.0}]
    mask = np.arange(400) % 5 != 0
    for corpus in (docs, fractional):
        index = SparseInvertedIndex(k1=1.2, b=0.7)
        index.build(corpus, valid_mask=np.arange(400) % 7 != 0)
        for valid in (None, mask):
            want_ids, want = index.search(queries, 25, valid_mask=valid)
            got_ids, got = speed.bm25_search(index, queries, 25, valid_mask=valid)
            assert got_ids.tolist() == want_ids.tolist()
            assert got.tobytes() == want.tobytes()  # bit for bit, ties in the same order


def test_the_array_bm25_index_matches_the_scalar_build() -> None:
    import pyarrow as pa
    from milvus_lite.analyzer.sparse import bytes_to_sparse, sparse_to_bytes
    from milvus_lite.index.sparse_inverted import SparseInvertedIndex

    rng = np.random.default_rng(4)
    docs = [{int(t): float(c) for t, c in zip(rng.integers(0, 40, 9), rng.integers(1, 5, 9), strict=True)}
            for _ in range(300)]  # fmt: skip
    docs[3] = {}
    column = pa.chunked_array([pa.array([sparse_to_bytes(doc) if i != 9 else None for i, doc in enumerate(docs)],
                                        type=pa.binary())])  # fmt: skip
    scalar = SparseInvertedIndex(k1=1.5, b=0.75)
    scalar.build([bytes_to_sparse(raw) if raw else {} for raw in column.to_pylist()])
    arrays = speed._array_index_class().from_column(column, 1.5, 0.75)
    assert arrays is not None
    assert (arrays.doc_count, arrays.avgdl) == (scalar.doc_count, scalar.avgdl)
    assert arrays._doc_lengths.tobytes() == scalar._doc_lengths.tobytes()
    queries = [{3: 1.0, 9: 1.0}, {39: 1.0, 7: 1.0}, {1000: 1.0}]
    for valid in (None, np.arange(300) % 4 != 0):
        want_ids, want = scalar.search(queries, 20, valid_mask=valid)
        got_ids, got = arrays.search(queries, 20, valid_mask=valid)
        assert got_ids.tolist() == want_ids.tolist()
        assert got.tobytes() == want.tobytes()
    fractional = pa.chunked_array([pa.array([sparse_to_bytes({1: 0.5})], type=pa.binary())])
    assert speed._array_index_class().from_column(fractional, 1.5, 0.75) is None  # left to the scalar build
