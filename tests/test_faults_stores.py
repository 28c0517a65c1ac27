"""The drop → 404 mapping and the stored version marker on Qdrant (local mode), as on Milvus
(tests/test_faults_versions.py, tests/test_drop_race.py): a collection dropped between a request's
existence check and its store call is "not found", and a changed source's partial new version,
left by a load that died, stays hidden from the next process until a re-run completes it.
Real Qdrant local mode in a temp dir; HashEmbedding stands in for the model (which rows are
stored does not depend on the vectors)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from test_replace_window import versioned_sources

from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.testing.hash_embedding import HashEmbedding
from deepsearcher.testing.vector_store_contract import Crash, CrashingEmbedding
from deepsearcher.types.errors import CollectionNotFoundError
from deepsearcher.vector_db.qdrant import Qdrant

COLLECTION = "kb"
SIZES = {"chunk_size": 200, "chunk_overlap": 0, "batch_size": 4}


def sources(version: int) -> list[LoadedSource]:
    return versioned_sources(version, (("a", 3), ("b", 14)), repeat=2)


def visible(path: Path) -> dict[str, Counter]:
    """What a search over everything finds in a new store object: per source, chunks per version."""
    store = Qdrant(path=str(path))
    try:
        hits = store.search_data(COLLECTION, HashEmbedding().embed_query("item"), top_k=500)
        found: dict[str, Counter] = {}
        for hit in hits:
            found.setdefault(hit.reference, Counter())[hit.metadata["source_hash"]] += 1
        return found
    finally:
        store.close()


def test_a_died_reload_leaves_every_source_one_whole_version_on_qdrant(tmp_path: Path) -> None:
    path = tmp_path / "qdrant"
    store = Qdrant(path=str(path))
    try:
        IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(1), COLLECTION)
        old = {ref: (record.source_hash, record.chunk_count) for ref, record in store.list_sources(COLLECTION).items()}
        with pytest.raises(Crash):  # dies after two batches of version 2 are stored
            IngestionPipeline(CrashingEmbedding(HashEmbedding(), crash_on=3), store, **SIZES).run(
                sources(2), COLLECTION
            )
        assert any(record.versions == 2 for record in store.list_sources(COLLECTION).values())  # both stored
    finally:
        store.close()
    died = visible(path)

    store = Qdrant(path=str(path))
    try:
        summary = IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(2), COLLECTION)
        assert summary.chunks_kept > 0  # the partial new version was resumed, not embedded again
        new = {ref: (record.source_hash, record.chunk_count) for ref, record in store.list_sources(COLLECTION).items()}
        assert all(record.versions == 1 for record in store.list_sources(COLLECTION).values())
    finally:
        store.close()
    assert all(new[ref][0] != old[ref][0] for ref in old)
    assert visible(path) == {ref: Counter({version: count}) for ref, (version, count) in new.items()}
    # after the crash, each source was one version, whole: the old one, or the new one if it was done
    assert set(died) == set(old)
    for ref, found in died.items():
        assert dict(found) in ({old[ref][0]: old[ref][1]}, {new[ref][0]: new[ref][1]}), (ref, found)
    assert dict(died["b"]) == {old["b"][0]: old["b"][1]}  # the long one was cut short: its old version


def test_a_collection_dropped_under_a_qdrant_search_is_not_found(tmp_path: Path) -> None:
    store = Qdrant(path=str(tmp_path / "qdrant"))
    try:
        IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(1), COLLECTION)
        vector = HashEmbedding().embed_query("item")
        assert store.search_data(COLLECTION, vector, top_k=3)
        store.client.delete_collection(COLLECTION)  # another request drops it after this one's check
        with pytest.raises(CollectionNotFoundError, match="'kb' does not exist"):
            store._search(COLLECTION, vector, 3, "item", None, None)  # the call after the existence check
    finally:
        store.close()


def test_an_index_deleted_by_another_client_is_not_found_on_azure_search(monkeypatch) -> None:
    """The Azure AI Search REST stand-in (real HTTP on 127.0.0.1, tests/azure_search_server.py): one
    client drops the collection another has already looked up; the second one's search is 404."""
    from azure_search_server import KEY, AzureSearchStandIn

    from deepsearcher.vector_db.azure_search import AzureSearch

    monkeypatch.delenv("AZURE_SEARCH_API_KEY", raising=False)
    stand_in = AzureSearchStandIn()
    loader, reader = (AzureSearch(endpoint=stand_in.url, api_key=KEY) for _ in range(2))
    try:
        IngestionPipeline(HashEmbedding(), loader, **SIZES).run(sources(1), COLLECTION)
        vector = HashEmbedding().embed_query("item")
        assert reader.search_data(COLLECTION, vector, top_k=3, query_text="item")  # it knows the index now
        loader.clear_db(COLLECTION)
        with pytest.raises(CollectionNotFoundError, match="'kb' does not exist"):
            reader.search_data(COLLECTION, vector, top_k=3, query_text="item")
    finally:
        loader.close()
        reader.close()
        stand_in.close()
