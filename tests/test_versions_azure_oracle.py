"""Replacement without a gap on AzureSearch and OracleDB, as on Milvus and Qdrant
(tests/test_faults_stores.py, tests/test_faults_versions.py): a changed source's new version is
stored before its old one is deleted, and the stored version marker keeps every reader, in another
store object (another process), on one version whole at every instant; a load that died leaves
the old version visible and the partial new one hidden, and a re-run completes it.

Real parts: the Azure AI Search REST stand-in (real HTTP on 127.0.0.1, tests/azure_search_server.py)
and the stand-in `oracledb` driver (SQLite behind its API, tests/fake_oracledb.py: no Oracle
database can run here, the one mocked part). HashEmbedding stands in for the model (which rows are
stored does not depend on the vectors)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from azure_search_server import KEY, AzureSearchStandIn
from test_faults_stores import COLLECTION, SIZES, sources

from deepsearcher.offline_loading import pipeline
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.testing.hash_embedding import HashEmbedding
from deepsearcher.testing.vector_store_contract import Crash, CrashingEmbedding
from deepsearcher.vector_db.base import BaseVectorDB

Opener = Callable[[], BaseVectorDB]
SETTLE: list[Callable[[], None]] = []  # the lagging stand-in's: its writes searchable now
Found = dict[str, dict[str, int]]


@pytest.fixture(params=["azure", "azure-lagging", "oracle"])
def open_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[Opener]:
    """Opens a new store object on the same data: a reader or writer in another process."""
    opened: list[BaseVectorDB] = []
    if request.param.startswith("azure"):
        from deepsearcher.vector_db import azure_search
        from deepsearcher.vector_db.azure_search import AzureSearch

        monkeypatch.delenv("AZURE_SEARCH_API_KEY", raising=False)
        # lagging: writes become searchable some requests later, as Azure indexes in near real time,
        # the chunks' index later than the version marker's (each index refreshes on its own)
        lagging = request.param == "azure-lagging"
        stand_in = AzureSearchStandIn(lag=8 if lagging else 0, index_lag={"deepsearcher-versions": 1})
        monkeypatch.setattr(azure_search, "POLL_S", 0.01)  # the stand-in's lag counts requests, not time
        request.addfinalizer(stand_in.close)
        SETTLE.append(stand_in.settle)
        request.addfinalizer(SETTLE.clear)
        make: Opener = lambda: AzureSearch(endpoint=stand_in.url, api_key=KEY)  # noqa: E731
    else:
        import fake_oracledb

        from deepsearcher.vector_db.oracle_db import OracleDB

        monkeypatch.setitem(sys.modules, "oracledb", fake_oracledb.module(str(tmp_path / "oracle.sqlite")))
        make = lambda: OracleDB(user="u", password="p", dsn="localhost/FREEPDB1")  # noqa: E731

    def open_one() -> BaseVectorDB:
        opened.append(make())
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


def visible(open_store: Opener) -> Found:
    """What a search over everything finds in a new store object: per source, chunks per version."""
    store = open_store()
    found: dict[str, Counter] = {}
    for hit in store.search_data(COLLECTION, HashEmbedding().embed_query("item"), top_k=500):
        found.setdefault(hit.reference, Counter())[hit.metadata["source_hash"]] += 1
    return {reference: dict(counts) for reference, counts in found.items()}


def versions(store: BaseVectorDB) -> dict[str, dict[str, int]]:
    """Per source: its one stored version → chunk count (each source stored as one version, whole),
    once the writes are searchable (a second after the load, on Azure)."""
    for settle in SETTLE:
        settle()
    records = store.list_sources(COLLECTION)
    assert all(record.versions == 1 and record.complete for record in records.values())
    return {reference: {record.source_hash: record.chunk_count} for reference, record in records.items()}


def test_a_reload_shows_every_reader_one_whole_version(open_store: Opener) -> None:
    store = open_store()
    IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(1), COLLECTION)
    old = versions(store)
    during: list[Found] = []  # what other readers found after each stored batch of the new versions
    at_delete: list[Found] = []  # ... and when a source's old rows were about to be deleted
    moved: list[Found] = []  # ... and right after each move of the version marker
    delete_ids, hide_versions = store.delete_ids, store.hide_versions

    def delete_observed(collection: str | None, ids: list[Any]) -> int:
        at_delete.append(visible(open_store))
        return delete_ids(collection, ids)

    def hide_observed(collection: str | None, hide: Any, show: Any = ()) -> None:
        hide_versions(collection, hide, show)
        moved.append(visible(open_store))

    def after_batch(stage: str, batch: int) -> None:
        if stage == "inserted":
            during.append(visible(open_store))

    store.delete_ids = delete_observed  # type: ignore[method-assign]
    store.hide_versions = hide_observed  # type: ignore[method-assign]
    pipeline.BATCH_OBSERVERS.append(after_batch)
    try:
        IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(2), COLLECTION)
    finally:
        pipeline.BATCH_OBSERVERS.remove(after_batch)
    new = versions(store)
    assert all(new[ref] != old[ref] for ref in old)
    assert len(at_delete) == 2 and during  # both sources replaced: the old rows of each deleted once
    assert len(moved) == 6  # per source: new hidden, then old hidden and new shown, then old forgotten
    for found in during + at_delete + moved:
        assert set(found) == set(old)  # never missing
        for ref, counts in found.items():
            assert counts in (old[ref], new[ref]), (ref, counts)  # one version, whole
    assert during[0]["b"] == old["b"]  # the long source, half-stored: its old version
    assert at_delete[-1] == new  # the new versions are shown before the old rows go
    assert visible(open_store) == new


def test_a_died_reload_leaves_the_old_version_and_a_rerun_completes_it(open_store: Opener) -> None:
    store = open_store()
    IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(1), COLLECTION)
    old = versions(store)

    def die(stage: str, batch: int) -> None:
        if stage == "inserted" and batch == 2:
            raise Crash("simulated crash after two batches of the new versions were stored")

    pipeline.BATCH_OBSERVERS.append(die)
    try:
        with pytest.raises(Crash):
            IngestionPipeline(HashEmbedding(), store, **SIZES).run(sources(2), COLLECTION)
    finally:
        pipeline.BATCH_OBSERVERS.remove(die)
    assert store.list_sources(COLLECTION)["b"].versions == 2  # both versions of the long one stored
    died = visible(open_store)
    assert died["b"] == old["b"]  # its partial new version is hidden from another reader

    rerun = open_store()  # the next process
    with pytest.raises(Crash):  # dies again, on its first embedding: nothing changes
        IngestionPipeline(CrashingEmbedding(HashEmbedding(), crash_on=1), rerun, **SIZES).run(sources(2), COLLECTION)
    assert visible(open_store) == died
    summary = IngestionPipeline(HashEmbedding(), rerun, **SIZES).run(sources(2), COLLECTION)
    assert summary.chunks_kept > 0  # the partial new version was resumed, not embedded again
    new = versions(rerun)
    assert all(new[ref] != old[ref] for ref in old)
    assert visible(open_store) == new
    for ref, counts in died.items():
        assert counts in (old[ref], new[ref]), (ref, counts)
