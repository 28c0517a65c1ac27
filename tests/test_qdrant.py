"""What is particular to the Qdrant store (the shared behaviour is in test_vector_store_contract.py):
where it keeps data, the client-side BM25 vectors, the reserved metadata collection, the
local folder lock, filters and errors. Real qdrant-client local mode in temp dirs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import MODEL

from deepsearcher.config.registry import ProviderInfo
from deepsearcher.types import Chunk, ConfigurationError, MissingDependencyError, StoreInUseError, VectorStoreError
from deepsearcher.vector_db import registry
from deepsearcher.vector_db.qdrant import (
    DEFAULT_AVGDL,
    K1,
    META_COLLECTION,
    Qdrant,
    bm25_document_vector,
    bm25_query_vector,
    token_index,
    tokenize,
)


@pytest.fixture
def qdrant_path(tmp_path: Path) -> str:
    return str(tmp_path / "qdrant")


@pytest.fixture
def store(qdrant_path):
    db = Qdrant(path=qdrant_path)
    yield db
    db.close()


def chunks_of(embedding, texts, reference="doc.txt", **metadata) -> list[Chunk]:
    chunks = [Chunk(text=text, reference=reference, metadata=dict(metadata)) for text in texts]
    return embedding.embed_chunks(chunks, show_progress=False)


def test_registered_with_its_extra():
    assert registry.get("Qdrant") is Qdrant
    info: ProviderInfo = registry.info("Qdrant")
    assert (info.extra, info.requires) == ("qdrant", ("qdrant_client",))


def test_default_is_local_mode_in_the_user_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    db = Qdrant()
    try:
        assert db.is_local and db.location == str(tmp_path / "xdg" / "deepsearcher" / "qdrant")
        assert Path(db.location).is_dir()
    finally:
        db.close()


def test_in_memory_mode_writes_nothing(tmp_path, monkeypatch, embedding):
    monkeypatch.chdir(tmp_path)
    for db in (Qdrant(path=":memory:"), Qdrant(location=":memory:")):
        db.init_collection(embedding.dimension, "docs", description="ephemeral", embedding_model=MODEL)
        db.insert_data("docs", chunks_of(embedding, ["in memory only"]))
        assert db.search_data("docs", embedding.embed_query("memory"), top_k=1)[0].text == "in memory only"
        assert db.get_collection_info("docs").description == "ephemeral"
        db.close()
    assert list(tmp_path.iterdir()) == []


def test_a_file_as_path_is_a_configuration_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigurationError, match="is a file"):
        Qdrant(path=str(tmp_path / "f"))


# ---------------------------------------------------------------------- BM25 vectors


def test_tokenizer_lowercases_words_and_splits_cjk():
    assert tokenize("Ticket QZ-8841 closed_today, ÉTÉ!") == ["ticket", "qz", "8841", "closed", "today", "été"]
    assert tokenize("向量数据库 search") == ["向", "量", "数", "据", "库", "search"]
    assert tokenize("  ,;  ") == []


def test_token_indices_are_stable_uint32():
    assert token_index("qdrant") == token_index("qdrant")
    assert token_index("qdrant") != token_index("milvus")
    assert all(0 <= token_index(t) < 2**32 for t in ("a", "b", "longer-token", "向"))
    # stable across processes (Python's hash() is salted per process)
    out = subprocess.run(
        [sys.executable, "-c", "from deepsearcher.vector_db.qdrant import token_index; print(token_index('qdrant'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(out.stdout) == token_index("qdrant")


def test_bm25_document_values_saturate_and_normalise_by_length():
    # A document of average length: tf=1 gives exactly 1.0, tf=2 less than twice that.
    words = [f"w{i}" for i in range(int(DEFAULT_AVGDL) - 2)]
    indices, values = bm25_document_vector(" ".join(["apple", "apple", *words]))
    by_index = dict(zip(indices, values, strict=False))
    assert by_index[token_index("w0")] == pytest.approx(1.0)
    apple = by_index[token_index("apple")]
    assert apple == pytest.approx(2 * (K1 + 1) / (2 + K1))
    assert 1.0 < apple < 2.0 < K1 + 1
    assert indices == sorted(indices) and len(indices) == len(set(indices))
    # The same term in a short document weighs more than in a long one.
    _, short = bm25_document_vector("apple pie", avgdl=100)
    long_doc = "apple " + " ".join(f"x{i}" for i in range(400))
    long_idx, long_vals = bm25_document_vector(long_doc, avgdl=100)
    assert short[0] > dict(zip(long_idx, long_vals, strict=False))[token_index("apple")]
    assert bm25_document_vector("") == ([], [])


def test_bm25_query_has_each_token_once_with_weight_one():
    indices, values = bm25_query_vector("bread bread flour")
    assert sorted(indices) == sorted({token_index("bread"), token_index("flour")})
    assert values == [1.0, 1.0]


def test_idf_ranks_the_rare_word_above_the_common_one(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    texts = [f"The report about item {i} was filed." for i in range(8)] + ["The zeolite report was filed."]
    store.insert_data("docs", chunks_of(embedding, texts))
    # "report" is in every passage, "zeolite" in one: with IDF the rare word decides.
    results = store.search_data("docs", embedding.embed_query("x"), top_k=3, query_text="report zeolite", mode="sparse")
    assert results[0].text == "The zeolite report was filed."
    assert results[0].score > 2 * results[1].score


def test_avgdl_is_fixed_per_collection(qdrant_path, embedding):
    first = Qdrant(path=qdrant_path, bm25_avgdl=40)
    first.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    first.close()
    second = Qdrant(path=qdrant_path, bm25_avgdl=500)
    try:
        assert second.get_collection_info("docs").extra["bm25_avgdl"] == 40
        assert second._collection_avgdl("docs") == 40  # inserts keep using the collection's norm
    finally:
        second.close()


# ---------------------------------------------------------------------- payload and metadata


def test_payload_holds_text_index_text_and_source_fields(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    chunk = chunks_of(
        embedding,
        ["Body text."],
        reference="a.md",
        title="Heading",
        source_hash="h1",
        source_chunks=1,
        path=Path("/x/y"),
    )[0]
    store.insert_data("docs", [chunk])
    [point], _ = store.client.scroll("docs", limit=10, with_payload=True)
    payload = point.payload
    assert payload["text"] == "Body text." and payload["index_text"] == "Heading\nBody text."
    assert (payload["reference"], payload["source_hash"], payload["source_chunks"]) == ("a.md", "h1", 1)
    assert payload["metadata"]["title"] == "Heading" and payload["metadata"]["path"] == "/x/y"  # made JSON-safe


def test_metadata_collection_is_hidden_and_reserved(store, embedding):
    store.init_collection(embedding.dimension, "docs", description="d", embedding_model=MODEL)
    assert store.client.collection_exists(META_COLLECTION)
    assert [c.collection_name for c in store.list_collections()] == ["docs"]
    with pytest.raises(ConfigurationError, match="reserved"):
        store.init_collection(embedding.dimension, META_COLLECTION)
    with pytest.raises(ConfigurationError, match="reserved"):
        Qdrant(path=":memory:", default_collection=META_COLLECTION)
    store.clear_db("docs")
    assert store.client.count(META_COLLECTION).count == 0  # its metadata went with it


def test_a_collection_made_outside_deepsearcher_is_adopted(store, embedding):
    from qdrant_client import models

    store.client.create_collection(
        "external",
        vectors_config={"dense": models.VectorParams(size=embedding.dimension, distance=models.Distance.COSINE)},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    info = store.get_collection_info("external")
    assert (info.dim, info.description, info.embedding_model) == (embedding.dimension, "", None)
    store.init_collection(embedding.dimension, "external", description="adopted", embedding_model=MODEL)
    info = store.get_collection_info("external")
    assert (info.description, info.embedding_model) == ("adopted", MODEL)


# ---------------------------------------------------------------------- filters and errors


def test_filter_restricts_results(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    store.insert_data("docs", chunks_of(embedding, ["notebook power one", "notebook power two"], reference="a.txt"))
    store.insert_data("docs", chunks_of(embedding, ["notebook power three"], reference="b.txt"))
    vector = embedding.embed_query("notebook power")
    for mode in ("dense", "sparse", "hybrid"):
        results = store.search_data(
            "docs", vector, top_k=5, query_text="notebook power", filter={"reference": "b.txt"}, mode=mode
        )
        assert [r.reference for r in results] == ["b.txt"], mode
    assert store.count("docs", {"reference": "a.txt"}) == 2
    with pytest.raises(ConfigurationError, match="Filter or a dict"):
        store.search_data("docs", vector, filter='reference == "b.txt"')


def test_hybrid_fuses_dense_and_bm25_ranks(store, embedding):
    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    store.insert_data("docs", chunks_of(embedding, ["alpha beta", "gamma delta", "epsilon"]))
    vector = embedding.embed_query("alpha beta")
    dense = store.search_data("docs", vector, top_k=3, mode="dense")
    hybrid = store.search_data("docs", vector, top_k=3, query_text="epsilon")
    assert dense[0].text == "alpha beta" and dense[0].score == pytest.approx(1.0, abs=1e-4)
    # "epsilon" is the only BM25 hit and also on the dense list: in both rankings, it wins the fusion.
    assert hybrid[0].text == "epsilon"
    assert [r.score for r in hybrid] == sorted((r.score for r in hybrid), reverse=True)
    assert {r.text for r in hybrid} == {"alpha beta", "gamma delta", "epsilon"}


def test_closed_store_says_so(qdrant_path):
    db = Qdrant(path=qdrant_path)
    db.close()
    with pytest.raises(VectorStoreError, match="is closed"):
        db.list_collections()


def test_unreachable_server_names_the_url():
    with pytest.raises(VectorStoreError) as excinfo:
        Qdrant(url="http://127.0.0.1:9", timeout=2, check_compatibility=False)
    message = str(excinfo.value)
    assert "http://127.0.0.1:9" in message and "running and reachable" in message


def test_missing_qdrant_client_names_the_extra(monkeypatch):
    for module in list(sys.modules):
        if module == "qdrant_client" or module.startswith("qdrant_client."):
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "qdrant_client", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'deepsearcher\[qdrant\]'"):
        Qdrant(path=":memory:")


_HOLDER = textwrap.dedent(
    """
    import sys
    from deepsearcher.vector_db.qdrant import Qdrant

    db = Qdrant(path=sys.argv[1])
    print("ready", [c.collection_name for c in db.list_collections()], flush=True)
    sys.stdin.read()
    db.close()
    """
)


def test_folder_in_use_by_another_process(qdrant_path, embedding):
    db = Qdrant(path=qdrant_path)
    db.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    db.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, qdrant_path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = holder.stdout.readline()
        assert line.strip() == "ready ['docs']", holder.stderr.read() if not line else line
        with pytest.raises(StoreInUseError) as excinfo:
            Qdrant(path=qdrant_path)
        message = str(excinfo.value)
        assert qdrant_path in message and "in use by another process" in message and "http://host:6333" in message
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    again = Qdrant(path=qdrant_path)  # free once the other process is gone
    try:
        assert again.has_collection("docs")
    finally:
        again.close()


def test_concurrent_inserts_and_searches_from_threads(store, embedding):
    """Local mode is not thread-safe by itself; the store serialises access (the ingestion
    pipeline inserts from a writer thread while the caller keeps working)."""
    from concurrent.futures import ThreadPoolExecutor

    store.init_collection(embedding.dimension, "docs", embedding_model=MODEL)
    vector = embedding.embed_query("thread")
    batches = [
        [Chunk(text=f"thread {t} chunk {i}", reference=f"t{t}.txt", embedding=vector) for i in range(50)]
        for t in range(4)
    ]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=4) as pool:
        inserted = list(pool.map(lambda batch: store.insert_data("docs", batch), batches))
        searches = list(pool.map(lambda _: len(store.search_data("docs", vector, top_k=3)), range(8)))
    assert inserted == [50] * 4
    assert all(0 <= n <= 3 for n in searches)
    assert {ref: rec.chunk_count for ref, rec in store.list_sources("docs").items()} == {
        f"t{t}.txt": 50 for t in range(4)
    }
    assert time.monotonic() - started < 60
