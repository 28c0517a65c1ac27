"""The ingestion pipeline on real files, the real model and real Milvus Lite."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import RenamedEmbedding, make_docs

from deepsearcher.agent.retriever import Retriever
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.types import EmbeddingMismatchError, VectorStoreError
from deepsearcher.vector_db.milvus import Milvus


@pytest.fixture
def store(milvus_uri: str):
    db = Milvus(uri=milvus_uri)
    yield db
    db.close()


def run(pipeline: IngestionPipeline, paths: list[Path], **kwargs):
    return pipeline.run(iter_file_sources(paths, FileLoader()), collection_name="kb", **kwargs)


def test_good_files_load_and_bad_ones_are_named(tmp_path: Path, embedding, store) -> None:
    docs = make_docs(tmp_path / "docs")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (docs / "empty.txt").write_text("")
    (docs / "bad.json").write_text('[{"text": "fine"},')
    (docs / "picture.png").write_bytes(b"\x89PNG\r\n")
    summary = run(
        IngestionPipeline(embedding, store), [docs, tmp_path / "missing.md"], collection_description="test docs"
    )

    assert sorted(Path(p).name for p in summary.loaded) == ["bread.txt", "records.jsonl", "volcano.md"]
    failed = {Path(f.source).name: f.reason for f in summary.failed}
    assert set(failed) == {"broken.pdf", "empty.txt", "bad.json", "missing.md"}
    assert "empty" in failed["empty.txt"]
    assert "JSON" in failed["bad.json"]
    assert "no such file" in failed["missing.md"]
    assert [Path(p).name for p in summary.unsupported] == ["picture.png"]
    assert not summary.ok
    assert summary.chunks_inserted == summary.embeddings_computed == 4

    results = Retriever(embedding, store).search("Who built the first compiler?", ["kb"], top_k=2)
    assert results[0].text.startswith("Grace Hopper")
    assert results[0].metadata["title"] == "Grace Hopper"
    assert store.get_collection_info("kb").description == "test docs"


def test_reload_unchanged_embeds_nothing_and_changed_file_is_replaced(tmp_path: Path, embedding, store) -> None:
    docs = make_docs(tmp_path / "docs")
    pipeline = IngestionPipeline(embedding, store)
    first = run(pipeline, [docs])
    assert first.embeddings_computed == 4

    again = run(pipeline, [docs])
    assert again.embeddings_computed == 0 and again.chunks_inserted == 0
    assert len(again.skipped_unchanged) == 3

    (docs / "bread.txt").write_text("Rye bread is dense because rye flour has little gluten.\n", encoding="utf-8")
    changed = run(pipeline, [docs])
    assert [Path(p).name for p in changed.replaced] == ["bread.txt"]
    assert changed.embeddings_computed == 1
    sources = store.list_sources("kb")
    assert sum(record.chunk_count for record in sources.values()) == 4
    texts = [r.text for r in Retriever(embedding, store).search("bread", ["kb"], top_k=4)]
    assert any("Rye bread" in text for text in texts)
    assert not any("Sourdough" in text for text in texts)


def test_relative_and_absolute_paths_are_one_source(
    tmp_path: Path, embedding, store, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = make_docs(tmp_path / "docs")
    pipeline = IngestionPipeline(embedding, store)
    run(pipeline, [docs / "bread.txt"])
    monkeypatch.chdir(tmp_path)
    again = run(pipeline, [Path("docs/bread.txt")])
    assert len(again.skipped_unchanged) == 1 and again.embeddings_computed == 0


def test_delete_by_reference_removes_a_source(tmp_path: Path, embedding, store) -> None:
    docs = make_docs(tmp_path / "docs")
    run(IngestionPipeline(embedding, store), [docs])
    reference = str((docs / "volcano.md").absolute())
    assert store.delete_by_reference("kb", reference) == 1
    assert reference not in store.list_sources("kb")
    texts = [r.text for r in Retriever(embedding, store).search("Krafla caldera eruption", ["kb"], top_k=4)]
    assert not any("Krafla" in text for text in texts)


def test_another_embedding_model_is_refused(tmp_path: Path, embedding, store) -> None:
    docs = make_docs(tmp_path / "docs")
    run(IngestionPipeline(embedding, store), [docs])
    other = RenamedEmbedding(embedding, "another-model")
    with pytest.raises(EmbeddingMismatchError, match="force.new.collection"):
        run(IngestionPipeline(other, store), [docs])
    with pytest.raises(EmbeddingMismatchError, match="another-model"):
        Retriever(other, store).search("bread", ["kb"])
    rebuilt = run(IngestionPipeline(other, store), [docs], force_new_collection=True)
    assert rebuilt.embeddings_computed == 4
    assert store.get_collection_info("kb").embedding_model == "another-model"


class FailingStore(Milvus):
    """Fault injection: the store dies after the first insert (a crash mid-load)."""

    inserts = 0

    def insert_data(self, collection, chunks, batch_size=256, **kwargs):
        FailingStore.inserts += 1
        if FailingStore.inserts > 1:
            raise VectorStoreError("store went away")
        return super().insert_data(collection, chunks, batch_size, **kwargs)


def test_interrupted_load_is_completed_on_the_next_run(tmp_path: Path, embedding, milvus_uri: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(
        "\n\n".join(f"Paragraph {i} talks about topic number {i} in detail." * 8 for i in range(30)), encoding="utf-8"
    )
    crashing = FailingStore(uri=milvus_uri)
    with pytest.raises(VectorStoreError):
        run(IngestionPipeline(embedding, crashing, batch_size=4, chunk_size=300, chunk_overlap=0), [docs])
    partial = crashing.list_sources("kb")
    record = next(iter(partial.values()))
    assert not record.complete
    crashing.close()

    store = Milvus(uri=milvus_uri)
    summary = run(IngestionPipeline(embedding, store, batch_size=4, chunk_size=300, chunk_overlap=0), [docs])
    assert len(summary.loaded) == 1 and summary.sources[0].reason.startswith("resumed an interrupted load: kept 4 of")
    healed = next(iter(store.list_sources("kb").values()))
    assert healed.complete
    # only the missing chunks were embedded: the 4 stored before the crash were kept
    assert summary.chunks_kept == 4 and summary.embeddings_computed == summary.chunks_inserted == healed.chunk_count - 4
    store.close()


def test_duplicated_and_stray_rows_are_removed_and_missing_ones_restored(tmp_path: Path, embedding, store) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(
        "\n\n".join(f"Section {i} is about subject {i} and nothing else." * 6 for i in range(8)), encoding="utf-8"
    )
    pipeline = IngestionPipeline(embedding, store, batch_size=4, chunk_size=300, chunk_overlap=0)
    first = run(pipeline, [docs])
    reference = first.loaded[0]
    rows = store.stored_chunks("kb", reference)
    total = len(rows)
    by_index = {row.chunk_index: row for row in rows}
    # a crash's leftovers: chunk 1 stored a second time (own id), chunk 2 gone
    copy = [chunk for chunk in _stored_chunks(store, reference) if chunk.metadata["chunk_index"] == 1]
    store.insert_data("kb", copy)
    store.delete_ids("kb", [by_index[2].id])
    assert store.list_sources("kb")[reference].chunk_count == total  # the count alone looks complete

    again = run(pipeline, [docs])
    assert again.duplicates_removed == 1 and again.embeddings_computed == 1 and again.chunks_kept == total - 1
    indexes = sorted(row.chunk_index for row in store.stored_chunks("kb", reference))
    assert indexes == list(range(total))
    assert run(pipeline, [docs]).skipped_unchanged == [reference]


def _stored_chunks(store, reference):
    """The stored chunks of `reference`, with their vectors, read back through a search."""
    from deepsearcher.types import Chunk

    hits = store.search_data("kb", [1.0] + [0.0] * 383, top_k=50)
    return [
        Chunk(text=h.text, reference=h.reference, metadata=h.metadata, embedding=[1.0] + [0.0] * 383)
        for h in hits
        if h.reference == reference
    ]


def test_title_is_indexed_but_text_stays_the_chunk(tmp_path: Path, embedding, store) -> None:
    docs = make_docs(tmp_path / "docs")
    run(IngestionPipeline(embedding, store), [docs])
    # "Volcanoes" is only the Markdown heading (the title), not in the chunk text.
    results = Retriever(embedding, store).search("Volcanoes", ["kb"], top_k=1)
    assert "Krafla" in results[0].text
    assert results[0].metadata.get("title") == "Volcanoes"
    assert "wider_text" in results[0].metadata
