"""Concurrent embedding batches against a real HTTP stand-in of an embedding API (127.0.0.1,
fixed latency per request) and a real Milvus Lite store: the window is bounded, 429 with
Retry-After is honoured, and loads stay exact and idempotent, also after a failed load."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.embedding._http import EmbeddingError
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.embed_scheduler import EmbedScheduler, concurrency_of
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.testing.embedding_server import StandInEmbeddingServer
from deepsearcher.vector_db.milvus import Milvus

FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}


@pytest.fixture
def api():
    with StandInEmbeddingServer(latency=0.1, dim=8) as server:
        yield server


def remote(api: StandInEmbeddingServer, **kwargs) -> OpenAIEmbedding:
    return OpenAIEmbedding(model="stand-in", api_key="test-key", base_url=api.url, dimension=None, **FAST, **kwargs)


def texts_sent(api: StandInEmbeddingServer, embedding: OpenAIEmbedding) -> int:
    """Texts the API has embedded so far, once `embedding` has asked it its dimension (one text)."""
    _ = embedding.dimension  # asked of the API on first use
    return api.stats()["texts"]


def corpus(folder: Path, files: int = 6, paragraphs: int = 4) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        text = "\n\n".join(
            f"File {f} paragraph {p}: notes on topic {f * 10 + p} for the field guide." for p in range(paragraphs)
        )
        (folder / f"notes{f}.txt").write_text(text, encoding="utf-8")
    return folder


def load(embedding, store, folder: Path, batch_size: int = 2):
    pipeline = IngestionPipeline(embedding, store, chunk_size=90, chunk_overlap=0, batch_size=batch_size)
    return pipeline.run(iter_file_sources([folder], FileLoader()), collection_name="kb")


def stored(store) -> int:
    return sum(record.chunk_count for record in store.list_sources("kb").values())


def test_http_providers_default_to_several_batches_in_flight_and_local_models_to_one(api, embedding):
    assert concurrency_of(remote(api)) == 4
    assert concurrency_of(remote(api, max_concurrency=2)) == 2
    assert concurrency_of(embedding) == 1


def test_at_most_max_concurrency_requests_in_flight_and_every_chunk_stored_once(api, milvus_uri, tmp_path):
    folder = corpus(tmp_path / "docs")
    embedding = remote(api, max_concurrency=3)
    _ = embedding.dimension  # the probe request, before the load's requests are counted
    with Milvus(uri=milvus_uri) as store:
        summary = load(embedding, store, folder)
        assert summary.embeddings_computed == summary.chunks_inserted == stored(store) == 24
        assert api.peak_in_flight == 3  # the window was used, and never exceeded
        again = load(embedding, store, folder)
        assert again.embeddings_computed == 0 and stored(store) == 24


def test_429_with_retry_after_is_honoured_inside_the_window(api, milvus_uri, tmp_path):
    folder = corpus(tmp_path / "docs", files=2)
    embedding = remote(api, max_concurrency=2)
    _ = embedding.dimension  # the probe request
    api.failures = [(429, {"Retry-After": "0.3"})]
    with Milvus(uri=milvus_uri) as store:
        summary = load(embedding, store, folder)
        assert 429 in api.statuses and embedding.retries == 1
        assert summary.chunks_inserted == stored(store) == 8
        assert api.peak_in_flight <= 2


def test_a_failed_load_with_batches_in_flight_is_completed_by_the_next_run(api, milvus_uri, tmp_path):
    folder = corpus(tmp_path / "docs")
    embedding = remote(api, max_concurrency=3)
    _ = embedding.dimension  # the probe request
    api.scripted = {api.requests + 6: (400, {})}  # the 6th batch is refused (not retried)
    with Milvus(uri=milvus_uri) as store:
        with pytest.raises(EmbeddingError, match="400"):
            load(embedding, store, folder)
        assert 0 < stored(store) < 24
        resumed = load(embedding, store, folder)
        sources = store.list_sources("kb")
        assert all(record.complete for record in sources.values()) and len(sources) == 6
        assert stored(store) == 24
        # chunks a partly loaded source already had are kept, not embedded again
        # (chunks_kept counts those of resumed sources; whole unchanged ones are chunks_unchanged)
        assert resumed.chunks_unchanged == 4 * len(resumed.skipped_unchanged)
        kept = resumed.chunks_kept
        assert (
            resumed.skipped_unchanged and resumed.embeddings_computed == 24 - 4 * len(resumed.skipped_unchanged) - kept
        )


def test_scheduler_returns_batches_as_they_finish(api):
    from deepsearcher.types import Chunk

    scheduler = EmbedScheduler(remote(api), max_concurrency=2)
    batches = [[Chunk(text=f"t{i}-{j}", reference="r") for j in range(2)] for i in range(5)]
    finished = []
    for batch in batches:
        finished += scheduler.submit(batch)
    finished += scheduler.drain()
    assert sorted(chunk.text for batch, _ in finished for chunk in batch) == sorted(c.text for b in batches for c in b)
    assert all(chunk.embedding is not None for batch, _ in finished for chunk in batch)
    assert [computed for _, computed in finished] == [2] * 5
    assert scheduler.peak_in_flight == 2


def test_a_text_repeated_in_a_batch_is_sent_once_and_every_copy_is_stored(tmp_path: Path, api) -> None:
    # The same file under two names (a man page and its alias) and one other file: the API
    # hears the repeated text once, and both copies are stored with the one vector.
    docs = tmp_path / "docs"
    docs.mkdir()
    shared = "Register a service on the local network. " * 20
    (docs / "avahi-publish.txt").write_text(shared, encoding="utf-8")
    (docs / "avahi-publish-service.txt").write_text(shared, encoding="utf-8")
    (docs / "other.txt").write_text("Resolve a host name to an address.", encoding="utf-8")
    store, embedding = Milvus(uri=str(tmp_path / "milvus.db")), remote(api)
    before = texts_sent(api, embedding)
    with store:
        summary = IngestionPipeline(embedding, store).run(iter_file_sources([docs], FileLoader()), "kb")
        sent = texts_sent(api, embedding) - before
        hits = store.search_data("kb", embedding.embed_query(shared), top_k=3)
    assert summary.chunks_inserted == 3 and summary.embeddings_computed == 2 and summary.embeddings_shared == 1
    assert sent == 2
    by_name = {Path(hit.reference).name: hit.score for hit in hits}
    assert by_name["avahi-publish.txt"] == by_name["avahi-publish-service.txt"] > by_name["other.txt"]


def test_a_text_embedded_in_an_earlier_batch_is_not_sent_again_within_the_memory(api) -> None:
    from deepsearcher.offline_loading.repeated_texts import RecentVectors
    from deepsearcher.types import Chunk

    embedding = remote(api)
    before = texts_sent(api, embedding)

    def batch(*texts: str) -> list[Chunk]:
        return [Chunk(text=text, reference="r") for text in texts]

    recent = RecentVectors(capacity=2)
    first = batch("ctags(1) Universal Ctags", "AUTHORS Julian Seward")
    assert recent.embed(embedding, first) == 2
    again = batch("AUTHORS Julian Seward", "ctags(1) Universal Ctags", "AUTHORS Julian Seward", "new page")
    assert recent.embed(embedding, again) == 1  # only "new page" is sent
    assert again[0].embedding == again[2].embedding == first[1].embedding and again[1].embedding == first[0].embedding
    assert texts_sent(api, embedding) - before == 3
    # capacity 2: "AUTHORS" (used last in `again`) and "new page" are remembered, "ctags" was let go
    assert recent.embed(embedding, batch("AUTHORS Julian Seward", "new page")) == 0
    assert recent.embed(embedding, batch("ctags(1) Universal Ctags")) == 1
    assert RecentVectors(capacity=0).embed(embedding, batch("x", "x")) == 1  # within a batch, always once


def test_a_load_shares_vectors_across_batches(tmp_path: Path, api) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("ctags", "ctags-universal"):  # one man page under two names, in different batches
        (docs / f"{name}.txt").write_text("Generate tag files for source code.", encoding="utf-8")
    (docs / "cut.txt").write_text("Remove sections from each line of files.", encoding="utf-8")
    # one batch in flight at a time: batches embedded side by side may each compute a text they share
    store, embedding = Milvus(uri=str(tmp_path / "milvus.db")), remote(api, max_concurrency=1)
    before = texts_sent(api, embedding)
    with store:
        pipeline = IngestionPipeline(embedding, store, batch_size=1)
        summary = pipeline.run(iter_file_sources([docs], FileLoader()), "kb")
    assert summary.chunks_inserted == 3 and summary.embeddings_computed == 2 and summary.embeddings_shared == 1
    assert texts_sent(api, embedding) - before == 2
