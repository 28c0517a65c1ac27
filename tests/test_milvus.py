"""The Milvus store against a real Milvus Lite database in a temp dir, with real embeddings."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import DISTRACTORS, MODEL, QUERY, TARGET, loaded, make_chunks

from deepsearcher.types import (
    Chunk,
    ConfigurationError,
    EmbeddingMismatchError,
    StoreInUseError,
    VectorStoreError,
)
from deepsearcher.vector_db import registry
from deepsearcher.vector_db.milvus import VARCHAR_MAX, Milvus


@pytest.fixture
def store(milvus_uri):
    db = Milvus(uri=milvus_uri)
    yield db
    db.close()


def test_registered_as_vector_db_provider():
    assert registry.get("Milvus") is Milvus


def test_default_uri_is_in_the_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    db = Milvus()
    try:
        assert db.uri == str(tmp_path / "xdg" / "deepsearcher" / "milvus.db")
        # Not created until something is stored: listing an empty store opens nothing (and is fast).
        assert db.list_collections() == [] and not Path(db.uri).exists()
        db.init_collection(dim=4, collection="notes", embedding_model="toy")
        assert Path(db.uri).is_dir()  # milvus-lite 3.x keeps a database in a directory
        assert [info.collection_name for info in db.list_collections()] == ["notes"]
    finally:
        db.close()


def test_lite_path_parent_is_created_but_never_a_tree(tmp_path, embedding):
    db = Milvus(uri=str(tmp_path / "a" / "store.db"))  # one new folder, as mkdir makes it
    try:
        db.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
        assert (tmp_path / "a" / "store.db").is_dir()
    finally:
        db.close()
    with pytest.raises(ConfigurationError, match=f"The folder {tmp_path / 'typo'} does not exist"):
        Milvus(uri=str(tmp_path / "typo" / "b" / "c" / "store.db"))
    assert not (tmp_path / "typo").exists()  # a typo leaves no folders behind


def test_uri_that_is_neither_server_nor_db_path_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match="ending in .db"):
        Milvus(uri=str(tmp_path / "store"))


def test_insert_and_dense_search(store, embedding):
    loaded(store, embedding)
    query = embedding.embed_query("my notebook will not power up")
    results = store.search_data("docs", query, top_k=3, mode="dense")
    assert len(results) == 3
    assert all(r.embedding is None and r.reference == "doc.txt" for r in results)
    assert TARGET not in [r.text for r in results]
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert 0.3 < scores[0] <= 1.0001  # cosine similarity


def test_bm25_on_a_rare_token_fixes_a_dense_miss(milvus_uri, embedding):
    vector = embedding.embed_query(QUERY)
    dense_store = Milvus(uri=milvus_uri, hybrid=False)
    try:
        loaded(dense_store, embedding)
        dense = dense_store.search_data("docs", vector, top_k=3, query_text=QUERY)
    finally:
        dense_store.close()
    hybrid_store = Milvus(uri=milvus_uri, hybrid=True)
    try:
        hybrid = hybrid_store.search_data("docs", vector, top_k=3, query_text=QUERY)
        sparse = hybrid_store.search_data("docs", vector, top_k=3, query_text=QUERY, mode="sparse")
        forced_dense = hybrid_store.search_data("docs", vector, top_k=3, query_text=QUERY, mode="dense")
        no_text = hybrid_store.search_data("docs", vector, top_k=3)
    finally:
        hybrid_store.close()

    assert TARGET not in [r.text for r in dense]
    assert hybrid[0].text == TARGET
    assert [r.text for r in sparse] == [TARGET]  # no other passage shares a query token
    assert sparse[0].score > 0  # BM25 score reported positive
    assert [r.text for r in forced_dense] == [r.text for r in dense]
    assert [r.text for r in no_text] == [r.text for r in dense]  # no query text: dense


def test_hybrid_scores_are_the_fused_scores(milvus_uri, embedding):
    vector = embedding.embed_query(QUERY)
    with Milvus(uri=milvus_uri) as db:  # defaults: weighted fusion
        loaded(db, embedding)
        everything = db.search_data("docs", vector, top_k=6, mode="dense")
        cosine = {r.text: r.score for r in everything}
        bm25 = db.search_data("docs", vector, top_k=1, query_text=QUERY, mode="sparse")[0].score
        weighted = db.search_data("docs", vector, top_k=3, query_text=QUERY)
    dense_weight, sparse_weight = db.weights
    expected = dense_weight * (1 + cosine[TARGET]) / 2 + sparse_weight * 2 * math.atan(bm25) / math.pi
    assert weighted[0].text == TARGET
    assert weighted[0].score == pytest.approx(expected, abs=1e-4)
    assert weighted[1].score == pytest.approx(dense_weight * (1 + cosine[weighted[1].text]) / 2, abs=1e-4)

    with Milvus(uri=milvus_uri, ranker="rrf", rrf_k=60) as db:
        rrf = db.search_data("docs", vector, top_k=3, query_text=QUERY)
    dense_rank = [r.text for r in everything].index(TARGET) + 1
    assert rrf[0].text == TARGET
    assert rrf[0].score == pytest.approx(1 / 61 + 1 / (60 + dense_rank), abs=1e-6)


def test_analyzer_milvus_lite_lacks_is_refused_before_creating(milvus_uri, embedding):
    with Milvus(uri=milvus_uri, analyzer="english") as db:
        with pytest.raises(ConfigurationError, match="no 'english' analyzer.*standard, jieba"):
            db.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
        assert db.list_collections() == []


def test_unknown_ranker_is_a_configuration_error(milvus_uri):
    with pytest.raises(ConfigurationError, match="weighted, rrf"):
        Milvus(uri=milvus_uri, ranker="max")


def test_sparse_search_needs_query_text(store, embedding):
    loaded(store, embedding)
    with pytest.raises(VectorStoreError, match="query_text"):
        store.search_data("docs", embedding.embed_query("x"), mode="sparse")
    with pytest.raises(ConfigurationError, match="dense, sparse, hybrid"):
        store.search_data("docs", embedding.embed_query("x"), mode="bm25")


def test_title_is_indexed_for_bm25_but_text_stays_the_chunk(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    chunks = make_chunks(
        embedding, ["It was founded in 1901 by two brothers."], reference="w.html", title="Vexmoor Brewery"
    )
    chunks += make_chunks(embedding, ["A quiet village with a church."], reference="v.html", title="Ashdown")
    store.insert_data("docs", chunks)
    results = store.search_data("docs", embedding.embed_query("Vexmoor"), top_k=2, query_text="Vexmoor", mode="sparse")
    assert [r.text for r in results] == ["It was founded in 1901 by two brothers."]
    assert results[0].metadata["title"] == "Vexmoor Brewery"


def test_filter_expression_restricts_results(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    store.insert_data("docs", make_chunks(embedding, DISTRACTORS[:2], reference="a.txt"))
    store.insert_data("docs", make_chunks(embedding, DISTRACTORS[2:], reference="b.txt"))
    vector = embedding.embed_query("notebook power")
    results = store.search_data("docs", vector, top_k=5, query_text="notebook power", filter='reference == "b.txt"')
    assert results and {r.reference for r in results} == {"b.txt"}


def test_description_survives_closing_and_reopening(milvus_uri, embedding):
    first = Milvus(uri=milvus_uri)
    first.init_collection(embedding.dimension, "notes", description="Notes about cats", embedding_model=MODEL)
    first.close()

    second = Milvus(uri=milvus_uri)
    try:
        info = second.get_collection_info("notes")
        assert info is not None
        assert (info.description, info.dim, info.embedding_model) == ("Notes about cats", embedding.dimension, MODEL)
        second.init_collection(embedding.dimension, "notes", embedding_model=MODEL)  # no description: kept
        assert second.get_collection_info("notes").description == "Notes about cats"
        second.init_collection(embedding.dimension, "notes", description="Cats and dogs", embedding_model=MODEL)
    finally:
        second.close()

    third = Milvus(uri=milvus_uri)
    try:
        assert [c.description for c in third.list_collections()] == ["Cats and dogs"]
    finally:
        third.close()


def test_list_collections_filters_by_dimension(store, embedding):
    store.init_collection(embedding.dimension, "minilm", description="small model", embedding_model=MODEL)
    store.init_collection(8, "tiny", description="eight dims", embedding_model="toy")
    everything = {c.collection_name: c for c in store.list_collections()}
    assert set(everything) == {"minilm", "tiny"}
    assert (everything["tiny"].dim, everything["tiny"].embedding_model) == (8, "toy")
    assert [c.collection_name for c in store.list_collections(dim=embedding.dimension)] == ["minilm"]
    assert [c.collection_name for c in store.list_collections(dim=8)] == ["tiny"]
    assert store.get_collection_info("absent") is None
    assert store.has_collection("minilm") and not store.has_collection("absent")


def test_force_new_collection_drops_the_old_data(store, embedding):
    loaded(store, embedding)
    assert store.count("docs") == 6
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL, force_new_collection=True)
    assert store.count("docs") == 0
    # ... and is the way to switch to another model
    store.init_collection(8, "docs", embedding_model="toy", force_new_collection=True)
    assert store.get_collection_info("docs").embedding_model == "toy"


def test_another_embedding_model_is_refused(store, embedding):
    loaded(store, embedding)
    with pytest.raises(EmbeddingMismatchError) as excinfo:
        store.init_collection(embedding.dimension, "docs", embedding_model="text-embedding-3-small")
    message = str(excinfo.value)
    assert MODEL in message and "text-embedding-3-small" in message
    assert "--force-new-collection" in message and "force_new_collection=True" in message
    with pytest.raises(EmbeddingMismatchError, match=r"dim 384.*dim 1536"):
        store.init_collection(1536, "docs", embedding_model=MODEL)
    assert store.count("docs") == 6  # nothing was dropped


def test_inserting_vectors_of_another_dimension_is_refused(store, embedding):
    store.init_collection(8, "tiny", embedding_model="toy")
    chunk = make_chunks(embedding, ["a sentence"])[0]
    with pytest.raises(EmbeddingMismatchError, match="384-dimensional"):
        store.insert_data("tiny", [chunk])


def test_delete_by_reference(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    store.insert_data("docs", make_chunks(embedding, DISTRACTORS[:3], reference='notes "draft".md'))
    store.insert_data("docs", make_chunks(embedding, [TARGET], reference="memo.txt"))
    assert store.delete_by_reference("docs", 'notes "draft".md') == 3
    assert store.delete_by_reference("docs", "never-loaded.txt") == 0
    results = store.search_data("docs", embedding.embed_query("notebook power"), top_k=5, query_text="notebook power")
    assert [r.reference for r in results] == ["memo.txt"]


def test_list_sources_counts_chunks_and_spots_partial_loads(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    store.insert_data(
        "docs", make_chunks(embedding, DISTRACTORS[:2], reference="a.txt", source_hash="h-a", source_chunks=2)
    )
    store.insert_data(
        "docs", make_chunks(embedding, DISTRACTORS[2:4], reference="b.txt", source_hash="h-b", source_chunks=5)
    )
    store.insert_data("docs", make_chunks(embedding, [TARGET], reference="c.txt"))  # no ingestion metadata
    sources = store.list_sources("docs")
    assert set(sources) == {"a.txt", "b.txt", "c.txt"}
    a, b, c = sources["a.txt"], sources["b.txt"], sources["c.txt"]
    assert (a.source_hash, a.chunk_count, a.expected_chunks, a.complete) == ("h-a", 2, 2, True)
    assert (b.source_hash, b.chunk_count, b.expected_chunks, b.complete) == ("h-b", 2, 5, False)
    assert (c.source_hash, c.chunk_count, c.expected_chunks, c.complete) == ("", 1, 1, True)


def test_long_text_is_truncated_by_bytes_not_rejected(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    long_text = "é" * 40000  # 80,000 UTF-8 bytes
    chunk = make_chunks(embedding, ["short"], reference="long.txt", wider_text="ü" * 50000)[0]
    chunk.text = long_text
    assert store.insert_data("docs", [chunk]) == 1
    [result] = store.search_data("docs", chunk.embedding, top_k=1, mode="dense")
    stored = result.text.encode("utf-8")
    assert len(stored) <= VARCHAR_MAX and result.text == "é" * (VARCHAR_MAX // 2)
    assert 0 < len(result.metadata["wider_text"]) < 50000


def test_chunk_without_embedding_is_refused(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    with pytest.raises(VectorStoreError, match="no embedding"):
        store.insert_data("docs", [Chunk(text="x", reference="r.txt")])


def test_collection_names_are_normalised(milvus_uri, embedding):
    db = Milvus(uri=milvus_uri, default_collection="my docs-2")
    try:
        assert db.default_collection == "my_docs_2"
        db.init_collection(embedding.dimension, None, embedding_model=MODEL)
        db.insert_data("my docs-2", make_chunks(embedding, [TARGET]))
        assert [c.collection_name for c in db.list_collections()] == ["my_docs_2"]
        assert db.search_data("my-docs 2", embedding.embed_query(TARGET), top_k=1)[0].text == TARGET
        with pytest.raises(ConfigurationError, match="bad/name"):
            db.init_collection(embedding.dimension, "bad/name", embedding_model=MODEL)
    finally:
        db.close()
    with pytest.raises(ConfigurationError, match="letters, digits and underscores"):
        Milvus(uri=milvus_uri, default_collection="bad/name")


def test_search_on_a_missing_collection_names_it_and_the_existing_ones(store, embedding):
    loaded(store, embedding, collection="papers")
    with pytest.raises(VectorStoreError) as excinfo:
        store.search_data("reports", embedding.embed_query("anything"), top_k=3)
    message = str(excinfo.value)
    assert "'reports' does not exist" in message and "papers" in message
    with pytest.raises(VectorStoreError, match="'reports' does not exist"):
        store.delete_by_reference("reports", "a.txt")


def test_clear_db_drops_the_collection(store, embedding):
    loaded(store, embedding)
    store.clear_db("docs")
    assert store.list_collections() == []
    with pytest.raises(VectorStoreError, match="does not exist"):
        store.search_data("docs", embedding.embed_query("x"))
    store.clear_db("docs")  # dropping a missing collection is not an error


_HOLDER = textwrap.dedent(
    """
    import sys
    from deepsearcher.vector_db.milvus import Milvus

    db = Milvus(uri=sys.argv[1])
    hit = db.search_data("docs", [1.0] + [0.0] * 383, top_k=1, mode="dense")[0]
    print("ready", hit.reference, flush=True)
    sys.stdin.read()  # hold the database until the test closes our stdin
    db.close()
    """
)


def test_database_in_use_by_another_process(milvus_uri, embedding):
    db = Milvus(uri=milvus_uri)
    loaded(db, embedding)
    db.close()  # releases the file lock

    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, milvus_uri],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = holder.stdout.readline()
        assert line.split() == ["ready", "doc.txt"], holder.stderr.read() if not line else line
        with pytest.raises(StoreInUseError) as excinfo:
            Milvus(uri=milvus_uri)
        message = str(excinfo.value)
        assert message.startswith(f"The Milvus Lite database {milvus_uri} is in use by another process")
        assert f"pid {holder.pid}" in message
        assert "`deepsearcher serve`" in message and "http://host:19530" in message
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)

    again = Milvus(uri=milvus_uri)  # free again once the other process is gone
    try:
        assert again.count("docs") == 6
    finally:
        again.close()


def test_unreachable_server_names_the_uri():
    with pytest.raises(VectorStoreError) as excinfo:
        Milvus(uri="http://127.0.0.1:9", timeout=5)
    message = str(excinfo.value)
    assert "http://127.0.0.1:9" in message and "running and reachable" in message


@pytest.mark.parametrize("kept", [0.0, 0.05, 0.5, 0.95])
def test_a_half_written_vector_index_is_rebuilt_not_fatal(milvus_uri, embedding, caplog, kept):
    """A process killed while Milvus Lite wrote an index sidecar leaves it truncated (seen in the
    SIGKILL sweep; an empty file is what CI's sweep left); the next open rebuilds it from the
    stored vectors instead of failing forever. (A declared index: index_type AUTO writes none while small.)"""
    db = Milvus(uri=milvus_uri, index_type="FLAT")
    db.init_collection(embedding.dimension, "torn", embedding_model=MODEL)
    db.insert_data("torn", make_chunks(embedding, [TARGET, *DISTRACTORS]))
    before = [hit.text for hit in db.search_data("torn", embedding.embed_query(QUERY), top_k=3)]
    db.close()
    sidecars = sorted(Path(milvus_uri).glob("collections/torn/**/*.idx"))
    assert sidecars, "Milvus Lite wrote no index sidecar: the layout this recovery relies on changed"
    for sidecar in sidecars:
        content = sidecar.read_bytes()
        sidecar.write_bytes(content[: int(len(content) * kept)])  # what a kill mid-write leaves

    reopened = Milvus(uri=milvus_uri, index_type="FLAT")
    try:
        with caplog.at_level("WARNING", logger="deepsearcher.vector_db.milvus"):
            hits = reopened.search_data("torn", embedding.embed_query(QUERY), top_k=3)
        assert [hit.text for hit in hits] == before and len(before) == 3
        assert "half-written" in caplog.text and "torn" in caplog.text
        assert all(sidecar.stat().st_size > 0 for sidecar in sidecars), "the rebuilt sidecars were not written"
    finally:
        reopened.close()


def test_a_damaged_data_file_fails_loudly_naming_the_collection_and_the_file(milvus_uri, embedding):
    """Only index sidecars are repaired (they are derived): a data segment cut short is the
    user's data, so opening the collection fails naming it and the file, and nothing is removed."""
    db = Milvus(uri=milvus_uri)
    db.init_collection(embedding.dimension, "broken", embedding_model=MODEL)
    db.insert_data("broken", make_chunks(embedding, [TARGET, *DISTRACTORS]))
    db.search_data("broken", embedding.embed_query(QUERY), top_k=1)
    db.close()
    segments = sorted(Path(milvus_uri).glob("collections/broken/**/data/*.parquet"))
    assert segments, "Milvus Lite wrote no data segment: the layout this test relies on changed"
    segments[0].write_bytes(segments[0].read_bytes()[:20])

    reopened = Milvus(uri=milvus_uri)
    try:
        with pytest.raises(VectorStoreError) as excinfo:
            reopened.search_data("broken", embedding.embed_query(QUERY), top_k=1)
        message = str(excinfo.value)
        assert "'broken'" in message and segments[0].name in message and "corrupted" in message
        assert segments[0].stat().st_size == 20
    finally:
        reopened.close()


def test_connect_retries_only_a_refusal_for_too_many_pings(monkeypatch):
    """The milvus-lite 2.5 engine refuses a fresh client's first channel with gRPC's "Too many
    pings" (seen in the server suite); that is retried, any other connect failure is not."""
    from deepsearcher.vector_db import milvus as milvus_module

    monkeypatch.setattr(milvus_module, "PING_RETRY_DELAYS", (0.01, 0.01))
    attempts: list[int] = []

    def refused_once() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            try:
                raise RuntimeError('details = "Too many pings"')
            except RuntimeError as grpc_error:
                raise ConnectionError("Fail connecting to server") from grpc_error
        return "client"

    assert milvus_module._with_ping_retries(refused_once) == "client" and len(attempts) == 2

    def down() -> str:
        attempts.append(1)
        raise ConnectionError("Fail connecting to server: connection refused")

    attempts.clear()
    with pytest.raises(ConnectionError, match="connection refused"):
        milvus_module._with_ping_retries(down)
    assert len(attempts) == 1


def test_milvus_lite_is_pinged_no_faster_than_its_server_allows(milvus_uri, embedding):
    """Milvus Lite's gRPC server keeps gRPC's default ping policy (one per 5 min without data);
    at pymilvus's 10 s, ~2.5 idle minutes (measured: a 170 s pause) made it send GOAWAY
    "too_many_pings", which gRPC printed on the terminal. The channel really carries the slower
    keep-alive, and a pass-through grpc_options of the user's is kept beside it. (The idle
    minutes themselves are not waited for here.)"""
    db = Milvus(uri=milvus_uri, grpc_options={"grpc.enable_retries": 0})
    try:
        db.init_collection(embedding.dimension, "pinged", embedding_model=embedding.model_name)
        options = db._client()._get_connection()._grpc_options
        assert options["grpc.keepalive_time_ms"] >= 300_000
        assert options["grpc.enable_retries"] == 0
        assert db.list_collections()[0].collection_name == "pinged"
    finally:
        db.close()


def test_an_exception_chain_that_loops_back_is_read_once():
    """gRPC errors can carry a __context__ that points back up the chain; looking for the ping
    refusal in it must end (an unreachable server once spun here forever)."""
    from deepsearcher.vector_db import milvus as milvus_module

    outer = ConnectionError("Fail connecting to server")
    inner = RuntimeError("connection refused")
    outer.__context__ = inner
    inner.__context__ = outer
    assert milvus_module._mentions(outer, "Too many pings") is False
    assert milvus_module._mentions(outer, "connection refused") is True
