"""The store contract as test mixins: run this project's whole BaseVectorDB contract on your store.

The haystack 2.x way: subclass the mixins in your own test module and provide a `backend`
fixture (a `StoreBackend`, or anything with the `StoreFactory` protocol) that opens your
store; the mixins give `store` (one opened store) and `embedding` (the bundled MiniLM model)
and bring the tests. This module imports pytest, so only test code may import it (pytest is a
dev dependency, not a runtime one)::

    import pytest
    from deepsearcher.testing.vector_store_contract import StoreBackend, VectorStoreContractTests

    class TestMyStore(VectorStoreContractTests):
        @pytest.fixture
        def backend(self, tmp_path):
            backend = StoreBackend(lambda **kw: MyStore(path=str(tmp_path / "db"), **kw))
            yield backend
            backend.cleanup()

Or pick groups: `SearchContractTests`, `CollectionContractTests`, `SourceContractTests`,
`PipelineContractTests`. A store without BM25 sets ``has_bm25=False`` and overrides
`assert_dense_only` (the default expects the Milvus store's warning for a Milvus < 2.5).
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

import pytest

from deepsearcher.agent.retriever import Retriever
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.testing.store_corpus import (
    DISTRACTORS,
    MODEL,
    QUERY,
    TARGET,
    RenamedEmbedding,
    loaded,
    make_chunks,
    make_docs,
)
from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    ConfigurationError,
    EmbeddingMismatchError,
    RetrievalResult,
    VectorStoreError,
)
from deepsearcher.vector_db.base import SourceRecord


@runtime_checkable
class VectorStore(Protocol):
    """What the contract calls on a store (`BaseVectorDB` has all of it)."""

    default_collection: str

    def init_collection(self, dim: int, collection: str | None = None, *args: object, **kwargs: object) -> None: ...
    def insert_data(self, collection: str | None, chunks: list[Chunk], *args: object, **kwargs: object) -> int: ...
    def search_data(
        self, collection: str | None, vector: list[float], *args: object, **kwargs: object
    ) -> list[RetrievalResult]: ...
    def list_collections(self, dim: int | None = None) -> list[CollectionInfo]: ...
    def get_collection_info(self, collection: str | None) -> CollectionInfo | None: ...
    def has_collection(self, collection: str | None) -> bool: ...
    def clear_db(self, collection: str | None = None) -> None: ...
    def delete_by_reference(self, collection: str | None, reference: str) -> int: ...
    def list_sources(self, collection: str | None) -> dict[str, SourceRecord]: ...
    def close(self) -> None: ...


class StoreFactory(Protocol):
    """What the tests need from the `backend` fixture: open stores of one kind at one place."""

    has_bm25: bool

    def open(self, **kwargs: object) -> VectorStore: ...
    def name(self, collection: str) -> str: ...
    def ours(self, infos: Iterable[CollectionInfo]) -> list[CollectionInfo]: ...
    def cleanup(self) -> None: ...


class StoreBackend:
    """A `StoreFactory` from a function opening the store (keyword arguments such as
    ``hybrid=`` or ``default_collection=`` are passed on). `shared=True` (a server other runs
    use too) prefixes every collection name per backend and drops those collections in `cleanup`."""

    def __init__(self, open_store: Callable[..., VectorStore], shared: bool = False, has_bm25: bool = True) -> None:
        self.open_store = open_store
        self.prefix = f"t{uuid.uuid4().hex[:8]}_" if shared else ""
        self.has_bm25 = has_bm25
        self.opened: list[VectorStore] = []

    def open(self, **kwargs: object) -> VectorStore:
        store = self.open_store(**kwargs)
        self.opened.append(store)
        return store

    def name(self, collection: str) -> str:
        return self.prefix + collection

    def ours(self, infos: Iterable[CollectionInfo]) -> list[CollectionInfo]:
        return [info for info in infos if info.collection_name.startswith(self.prefix)]

    def cleanup(self) -> None:
        for store in self.opened:
            store.close()
        if self.prefix:
            store = self.open()
            for info in self.ours(store.list_collections()):
                store.clear_db(info.collection_name)
            store.close()


@functools.cache
def bundled_embedding() -> BaseEmbedding:
    """The bundled all-MiniLM-L6-v2 model, loaded once per process (it takes seconds)."""
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    return MiniLMEmbedding()


class _StoreFixtures:
    """`store` and `embedding` for the mixins; the subclass provides `backend`."""

    @pytest.fixture
    def store(self, backend: StoreFactory) -> VectorStore:
        return backend.open()

    @pytest.fixture
    def embedding(self) -> BaseEmbedding:
        return bundled_embedding()


def total_chunks(store, collection) -> int:
    return sum(record.chunk_count for record in store.list_sources(collection).values())


def run(pipeline: IngestionPipeline, paths: list[Path], collection: str, **kwargs):
    return pipeline.run(iter_file_sources(paths, FileLoader()), collection_name=collection, **kwargs)


class Crash(Exception):
    """Stands for the process dying half-way through a load."""


class CrashingEmbedding(RenamedEmbedding):
    """The real model, failing on call number `crash_on` (a stand-in for a killed process)."""

    def __init__(self, inner, crash_on: int) -> None:
        super().__init__(inner, inner.model_name)
        self.calls = 0
        self.crash_on = crash_on

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.crash_on:
            raise Crash(f"simulated crash on embedding call {self.calls}")
        return super().embed_documents(texts)


class SearchContractTests(_StoreFixtures):
    """Dense, BM25 and hybrid search, search-mode errors, titles indexed for BM25."""

    def test_insert_and_dense_search(self, backend, store, embedding):
        docs = backend.name("docs")
        loaded(store, embedding, docs)
        results = store.search_data(docs, embedding.embed_query("my notebook will not power up"), top_k=3, mode="dense")
        assert len(results) == 3
        assert all(r.embedding is None and r.reference == "doc.txt" for r in results)
        assert TARGET not in [r.text for r in results]
        assert {r.text for r in results} <= set(DISTRACTORS)
        scores = [r.score for r in results]
        assert scores == sorted(scores, reverse=True)
        assert 0.3 < scores[0] <= 1.0001  # cosine similarity

    def test_hybrid_search_finds_a_rare_token_dense_search_misses(self, backend, embedding, caplog):
        docs = backend.name("docs")
        vector = embedding.embed_query(QUERY)
        dense_store = backend.open(hybrid=False)
        loaded(dense_store, embedding, docs)
        dense = dense_store.search_data(docs, vector, top_k=3, query_text=QUERY)  # hybrid=False: dense even with text
        dense_store.close()

        store = backend.open(hybrid=True)
        if not backend.has_bm25:
            self.assert_dense_only(store, docs, vector, dense, caplog)
            return
        hybrid = store.search_data(docs, vector, top_k=3, query_text=QUERY)
        sparse = store.search_data(docs, vector, top_k=3, query_text=QUERY, mode="sparse")
        forced_dense = store.search_data(docs, vector, top_k=3, query_text=QUERY, mode="dense")
        no_text = store.search_data(docs, vector, top_k=3)

        assert TARGET not in [r.text for r in dense]
        assert hybrid[0].text == TARGET
        assert [r.text for r in sparse] == [TARGET]  # no other passage shares a query token
        assert sparse[0].score > 0
        assert [r.text for r in forced_dense] == [r.text for r in dense]
        assert [r.text for r in no_text] == [r.text for r in dense]  # no query text: dense

    def test_search_mode_errors(self, backend, store, embedding):
        docs = backend.name("docs")
        loaded(store, embedding, docs)
        with pytest.raises(VectorStoreError, match="query_text"):
            store.search_data(docs, embedding.embed_query("x"), mode="sparse")
        with pytest.raises(ConfigurationError, match="dense, sparse, hybrid"):
            store.search_data(docs, embedding.embed_query("x"), mode="bm25")

    def test_title_is_indexed_for_bm25_but_text_stays_the_chunk(self, backend, store, embedding):
        docs = backend.name("docs")
        store.init_collection(embedding.dimension, docs, embedding_model=MODEL)
        chunks = make_chunks(
            embedding, ["It was founded in 1901 by two brothers."], reference="w.html", title="Vexmoor Brewery"
        )
        chunks += make_chunks(embedding, ["A quiet village with a church."], reference="v.html", title="Ashdown")
        store.insert_data(docs, chunks)
        if not backend.has_bm25:  # the title still travels in the metadata
            with pytest.raises(VectorStoreError, match="no BM25"):
                store.search_data(docs, embedding.embed_query("Vexmoor"), top_k=2, query_text="Vexmoor", mode="sparse")
            results = store.search_data(docs, embedding.embed_query("It was founded in 1901"), top_k=1)
        else:
            results = store.search_data(
                docs, embedding.embed_query("Vexmoor"), top_k=2, query_text="Vexmoor", mode="sparse"
            )
        assert [r.text for r in results] == ["It was founded in 1901 by two brothers."]
        assert results[0].metadata["title"] == "Vexmoor Brewery"
        assert results[0].reference == "w.html"

    def assert_dense_only(self, store, docs, vector, dense, caplog) -> None:
        """A Milvus server without BM25: one warning naming its version and what is lost; hybrid
        falls back to the dense ranking; a BM25 search is refused naming the server. Override
        this for a dense-only store of your own."""
        with caplog.at_level(logging.WARNING, logger="deepsearcher.vector_db.milvus"):
            hybrid = store.search_data(docs, vector, top_k=3, query_text=QUERY)
            again = store.search_data(docs, vector, top_k=3, query_text=QUERY)
        warnings = [r.getMessage() for r in caplog.records if r.name == "deepsearcher.vector_db.milvus"]
        assert len(warnings) == 1, warnings
        assert "2.3.5" in warnings[0] and "BM25" in warnings[0] and "dense-only" in warnings[0]
        assert [r.text for r in hybrid] == [r.text for r in again] == [r.text for r in dense]
        with pytest.raises(VectorStoreError, match=r"no BM25 functions \(Milvus >= 2.5\)"):
            store.search_data(docs, vector, top_k=3, query_text=QUERY, mode="sparse")


class CollectionContractTests(_StoreFixtures):
    """Collections: info kept across reopening, listing by dimension, the embedding-model and dimension
    guards, missing collections named, dropping, name normalisation."""

    def test_description_survives_closing_and_reopening(self, backend, embedding):
        notes = backend.name("notes")
        first = backend.open()
        first.init_collection(embedding.dimension, notes, description="Notes about cats", embedding_model=MODEL)
        first.close()

        second = backend.open()
        info = second.get_collection_info(notes)
        assert info is not None
        assert (info.collection_name, info.description, info.dim, info.embedding_model) == (
            notes,
            "Notes about cats",
            embedding.dimension,
            MODEL,
        )
        second.init_collection(embedding.dimension, notes, embedding_model=MODEL)  # no description: kept
        assert second.get_collection_info(notes).description == "Notes about cats"
        second.init_collection(embedding.dimension, notes, description="Cats and dogs", embedding_model=MODEL)
        second.close()

        third = backend.open()
        assert [c.description for c in backend.ours(third.list_collections())] == ["Cats and dogs"]

    def test_list_collections_filters_by_dimension(self, backend, store, embedding):
        minilm, tiny = backend.name("minilm"), backend.name("tiny")
        store.init_collection(embedding.dimension, minilm, description="small model", embedding_model=MODEL)
        store.init_collection(8, tiny, description="eight dims", embedding_model="toy")
        everything = {c.collection_name: c for c in backend.ours(store.list_collections())}
        assert set(everything) == {minilm, tiny}
        assert (everything[tiny].dim, everything[tiny].embedding_model, everything[tiny].description) == (
            8,
            "toy",
            "eight dims",
        )
        assert [c.collection_name for c in backend.ours(store.list_collections(dim=embedding.dimension))] == [minilm]
        assert [c.collection_name for c in backend.ours(store.list_collections(dim=8))] == [tiny]
        assert store.get_collection_info(backend.name("absent")) is None
        assert store.has_collection(minilm) and not store.has_collection(backend.name("absent"))

    def test_force_new_collection_drops_the_old_data(self, backend, store, embedding):
        docs = backend.name("docs")
        loaded(store, embedding, docs)
        assert total_chunks(store, docs) == 6
        store.init_collection(embedding.dimension, docs, embedding_model=MODEL, force_new_collection=True)
        assert total_chunks(store, docs) == 0
        store.init_collection(8, docs, embedding_model="toy", force_new_collection=True)  # the way to switch models
        info = store.get_collection_info(docs)
        assert (info.embedding_model, info.dim) == ("toy", 8)

    def test_another_embedding_model_is_refused(self, backend, store, embedding):
        docs = backend.name("docs")
        loaded(store, embedding, docs)
        with pytest.raises(EmbeddingMismatchError) as excinfo:
            store.init_collection(embedding.dimension, docs, embedding_model="text-embedding-3-small")
        message = str(excinfo.value)
        assert MODEL in message and "text-embedding-3-small" in message
        assert "--force-new-collection" in message and "force_new_collection=True" in message
        with pytest.raises(EmbeddingMismatchError, match=r"dim 384.*dim 1536"):
            store.init_collection(1536, docs, embedding_model=MODEL)
        assert total_chunks(store, docs) == 6  # nothing was dropped

    def test_inserting_vectors_of_another_dimension_or_none_is_refused(self, backend, store, embedding):
        tiny = backend.name("tiny")
        store.init_collection(8, tiny, embedding_model="toy")
        chunk = make_chunks(embedding, ["a sentence"])[0]
        with pytest.raises(EmbeddingMismatchError, match="384-dimensional"):
            store.insert_data(tiny, [chunk])
        with pytest.raises(VectorStoreError, match="no embedding"):
            store.insert_data(tiny, [Chunk(text="x", reference="r.txt")])
        assert store.insert_data(tiny, []) == 0

    def test_missing_collection_is_named_with_the_existing_ones(self, backend, store, embedding):
        papers, reports = backend.name("papers"), backend.name("reports")
        loaded(store, embedding, papers)
        with pytest.raises(VectorStoreError) as excinfo:
            store.search_data(reports, embedding.embed_query("anything"), top_k=3)
        message = str(excinfo.value)
        assert f"'{reports}' does not exist" in message and papers in message
        with pytest.raises(VectorStoreError, match=f"'{reports}' does not exist"):
            store.delete_by_reference(reports, "a.txt")
        with pytest.raises(VectorStoreError, match=f"'{reports}' does not exist"):
            store.list_sources(reports)

    def test_clear_db_drops_the_collection(self, backend, store, embedding):
        docs = backend.name("docs")
        loaded(store, embedding, docs)
        store.clear_db(docs)
        assert backend.ours(store.list_collections()) == []
        with pytest.raises(VectorStoreError, match="does not exist"):
            store.search_data(docs, embedding.embed_query("x"))
        store.clear_db(docs)  # dropping a missing collection is not an error

    def test_collection_names_are_normalised(self, backend, embedding):
        db = backend.open(default_collection=backend.name("my docs-2"))
        expected = backend.name("my_docs_2")
        assert db.default_collection == expected
        db.init_collection(embedding.dimension, None, embedding_model=MODEL)
        db.insert_data(backend.name("my docs-2"), make_chunks(embedding, [TARGET]))
        assert [c.collection_name for c in backend.ours(db.list_collections())] == [expected]
        assert db.search_data(backend.name("my-docs 2"), embedding.embed_query(TARGET), top_k=1)[0].text == TARGET
        with pytest.raises(ConfigurationError, match="bad/name"):
            db.init_collection(embedding.dimension, "bad/name", embedding_model=MODEL)


class SourceContractTests(_StoreFixtures):
    """Sources: delete by reference, chunk counts per source that spot partial loads, paging."""

    def test_delete_by_reference(self, backend, store, embedding):
        docs = backend.name("docs")
        store.init_collection(embedding.dimension, docs, embedding_model=MODEL)
        store.insert_data(docs, make_chunks(embedding, DISTRACTORS[:3], reference='notes "draft".md'))
        store.insert_data(docs, make_chunks(embedding, [TARGET], reference="memo.txt"))
        assert store.delete_by_reference(docs, 'notes "draft".md') == 3
        assert store.delete_by_reference(docs, "never-loaded.txt") == 0
        results = store.search_data(docs, embedding.embed_query("notebook power"), top_k=5, query_text="notebook power")
        assert [r.reference for r in results] == ["memo.txt"]

    def test_list_sources_counts_chunks_and_spots_partial_loads(self, backend, store, embedding):
        docs = backend.name("docs")
        store.init_collection(embedding.dimension, docs, embedding_model=MODEL)
        store.insert_data(
            docs, make_chunks(embedding, DISTRACTORS[:2], reference="a.txt", source_hash="h-a", source_chunks=2)
        )
        store.insert_data(
            docs, make_chunks(embedding, DISTRACTORS[2:4], reference="b.txt", source_hash="h-b", source_chunks=5)
        )
        store.insert_data(docs, make_chunks(embedding, [TARGET], reference="c.txt"))  # no ingestion metadata
        sources = store.list_sources(docs)
        assert set(sources) == {"a.txt", "b.txt", "c.txt"}
        a, b, c = sources["a.txt"], sources["b.txt"], sources["c.txt"]
        assert (a.source_hash, a.chunk_count, a.expected_chunks, a.complete) == ("h-a", 2, 2, True)
        assert (b.source_hash, b.chunk_count, b.expected_chunks, b.complete) == ("h-b", 2, 5, False)
        assert (c.source_hash, c.chunk_count, c.expected_chunks, c.complete) == ("", 1, 1, True)

    def test_list_sources_pages_through_many_chunks(self, backend, store, embedding):
        docs = backend.name("docs")
        store.init_collection(embedding.dimension, docs, embedding_model=MODEL)
        vector = embedding.embed_query("filler")
        chunks = [
            Chunk(
                text=f"filler {i}",
                reference=f"f{i % 3}.txt",
                metadata={"source_hash": "h", "source_chunks": 800},
                embedding=vector,
            )
            for i in range(2400)
        ]
        assert store.insert_data(docs, chunks, batch_size=1000) == 2400
        sources = store.list_sources(docs)
        assert {ref: rec.chunk_count for ref, rec in sources.items()} == {"f0.txt": 800, "f1.txt": 800, "f2.txt": 800}
        assert all(rec.complete for rec in sources.values())


class PipelineContractTests(_StoreFixtures):
    """The ingestion pipeline on the store: unchanged reloads embed nothing, changed files are
    replaced, delete by source, the model guard, an interrupted load completed."""

    def test_pipeline_reload_embeds_nothing_and_replaces_a_changed_file(self, backend, store, embedding, tmp_path):
        kb = backend.name("kb")
        docs = make_docs(tmp_path / "docs")
        pipeline = IngestionPipeline(embedding, store)
        first = run(pipeline, [docs], kb, collection_description="test docs")
        assert first.embeddings_computed == first.chunks_inserted == 4
        assert store.get_collection_info(kb).description == "test docs"

        again = run(pipeline, [docs], kb)
        assert again.embeddings_computed == 0 and again.chunks_inserted == 0
        assert len(again.skipped_unchanged) == 3
        assert total_chunks(store, kb) == 4  # the same rows, none added or lost

        (docs / "bread.txt").write_text("Rye bread is dense because rye flour has little gluten.\n", encoding="utf-8")
        changed = run(pipeline, [docs], kb)
        assert [Path(p).name for p in changed.replaced] == ["bread.txt"]
        assert changed.embeddings_computed == 1
        assert total_chunks(store, kb) == 4
        texts = [r.text for r in Retriever(embedding, store).search("bread", [kb], top_k=4)]
        assert any("Rye bread" in text for text in texts)
        assert not any("Sourdough" in text for text in texts)
        answer = Retriever(embedding, store).search("Who built the first compiler?", [kb], top_k=2)[0]
        assert answer.text.startswith("Grace Hopper") and answer.metadata["title"] == "Grace Hopper"

    def test_pipeline_reload_after_reopening_the_store(self, backend, embedding, tmp_path):
        kb = backend.name("kb")
        docs = make_docs(tmp_path / "docs")
        first = backend.open()
        assert run(IngestionPipeline(embedding, first), [docs], kb).embeddings_computed == 4
        first.close()
        second = backend.open()
        again = run(IngestionPipeline(embedding, second), [docs], kb)
        assert again.embeddings_computed == 0 and len(again.skipped_unchanged) == 3

    def test_pipeline_delete_and_model_guard(self, backend, store, embedding, tmp_path):
        kb = backend.name("kb")
        docs = make_docs(tmp_path / "docs")
        run(IngestionPipeline(embedding, store), [docs], kb)
        reference = str((docs / "volcano.md").absolute())
        assert store.delete_by_reference(kb, reference) == 1
        assert reference not in store.list_sources(kb)

        other = RenamedEmbedding(embedding, "another-model")
        with pytest.raises(EmbeddingMismatchError, match="force.new.collection"):
            run(IngestionPipeline(other, store), [docs], kb)
        with pytest.raises(EmbeddingMismatchError, match="another-model"):
            Retriever(other, store).search("bread", [kb])
        rebuilt = run(IngestionPipeline(other, store), [docs], kb, force_new_collection=True)
        assert rebuilt.embeddings_computed == 4
        assert store.get_collection_info(kb).embedding_model == "another-model"

    def test_pipeline_completes_an_interrupted_load(self, backend, store, embedding, tmp_path):
        kb = backend.name("kb")
        docs = tmp_path / "docs"
        docs.mkdir()
        paragraphs = [
            f"Paragraph {i} of the field guide describes bird species number {i} in detail." for i in range(12)
        ]
        (docs / "guide.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
        crashing = CrashingEmbedding(embedding, crash_on=4)
        with pytest.raises(Crash):
            run(IngestionPipeline(crashing, store, chunk_size=120, chunk_overlap=0, batch_size=2), [docs], kb)
        reference = str((docs / "guide.txt").absolute())
        partial = store.list_sources(kb)[reference]
        assert 0 < partial.chunk_count < partial.expected_chunks and not partial.complete

        resumed = run(IngestionPipeline(embedding, store, chunk_size=120, chunk_overlap=0, batch_size=2), [docs], kb)
        record = store.list_sources(kb)[reference]
        assert record.complete and record.chunk_count == partial.expected_chunks
        assert 0 < resumed.embeddings_computed <= partial.expected_chunks
        hits = store.search_data(kb, embedding.embed_query("bird species"), top_k=50, mode="dense")
        texts = [hit.text for hit in hits]
        assert len(texts) == len(set(texts)) == partial.expected_chunks  # every chunk once, none twice


class VectorStoreContractTests(
    SearchContractTests, CollectionContractTests, SourceContractTests, PipelineContractTests
):
    """The whole store contract."""
