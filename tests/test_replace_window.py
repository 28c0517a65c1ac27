"""A changed file is replaced without a gap, and a killed replacement resumes without a store error.

`deepsearcher load` of changed files is SIGKILLed at kill points drawn at random (seeded, so a
failure replays), then killed again while resuming, then run to the end. In each window between
a kill and the next run, every source must be stored as its old version whole or its new version
whole (never missing, never only part of both), and no row may be stored twice; the last run
must leave exactly the new versions.

Stand-in: the processes use `deepsearcher.testing.hash_embedding` instead of the bundled model
(loading it would cost seconds per process); which rows are stored does not depend on the
vectors. The store is real Milvus Lite in a temp dir and the killed process is the real CLI.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from helpers import components_for
from test_crash_injection import config

from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.testing.crash_points import CRASH_ENV
from deepsearcher.testing.hash_embedding import HashEmbedding
from deepsearcher.types import Document
from deepsearcher.vector_db.milvus import Milvus

ROOT = Path(__file__).resolve().parents[1]
COLLECTION = "crash"  # the collection test_crash_injection's config names nothing else about
SEED = 36
Keys = frozenset[tuple[int | None, str]]


def write_version(folder: Path, version: int) -> None:
    """Three files whose every chunk changes between versions, one of them long (about 9 batches)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, paragraphs in (("a", 3), ("b", 5), ("long", 30)):
        text = "\n\n".join(
            f"Version {version} of {name}, paragraph {i}: item {i * version} is described here in words."
            for i in range(paragraphs)
        )
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")


def run_load(corpus: Path, uri: Path) -> None:
    components = components_for(config(uri.with_suffix(".yaml"), uri))
    try:
        summary = load(components, LoadRequest(inputs=[str(corpus)], collection=COLLECTION))
        assert summary.ok, summary.to_dict()["failed"]
    finally:
        components.vector_db.close()


def stored(uri: Path) -> dict[str, Counter]:
    """Per source: how often each (chunk index, chunk key) is stored; fails on an id stored twice."""
    store = Milvus(uri=str(uri))
    try:
        result = {}
        for reference in sorted(store.list_sources(COLLECTION)):
            rows = store.stored_chunks(COLLECTION, reference)
            assert rows is not None
            assert max(Counter(row.id for row in rows).values()) == 1, f"an id of {reference} is stored twice"
            result[reference] = Counter((row.chunk_index, row.chunk_key) for row in rows)
        return result
    finally:
        store.close()


def versions_of(base: Path) -> tuple[Path, dict[str, Keys], dict[str, Keys]]:
    """The corpus (at version 2) and each source's chunk keys in versions 1 and 2, from clean loads."""
    corpus = base / "docs"
    keys = []
    for version in (1, 2):
        write_version(corpus, version)
        run_load(corpus, base / f"v{version}.db")
        keys.append({reference: frozenset(rows) for reference, rows in stored(base / f"v{version}.db").items()})
    return corpus, keys[0], keys[1]


def kill_load(corpus: Path, uri: Path, point: str, tmp_path: Path) -> None:
    env = {**os.environ, CRASH_ENV: point, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "deepsearcher.cli.main", "load", str(corpus), "--collection", COLLECTION]
    command += ["-c", str(config(tmp_path / "kill.yaml", uri)), "--json"]
    killed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, (point, killed.stderr[-2000:])


def test_every_source_is_old_whole_or_new_whole_between_kills(tmp_path: Path) -> None:
    corpus, old, new = versions_of(tmp_path)
    assert all(old[reference].isdisjoint(new[reference]) for reference in old)  # every chunk changed
    rng = random.Random(SEED)
    batches = sum(len(keys) for keys in new.values()) // 4  # batch_size 4 in test_crash_injection's config
    trials = [[f"{rng.choice(('embedded', 'inserted'))}:{rng.randint(1, batches)}" for _ in range(2)] for _ in range(2)]
    for number, points in enumerate(trials):
        uri = tmp_path / f"trial{number}.db"
        shutil.copytree(tmp_path / "v1.db", uri)  # the store as version 1 left it
        for point in points:  # killed while replacing, then killed again while resuming
            kill_load(corpus, uri, point, tmp_path)
            window = stored(uri)
            assert set(window) == set(old), (points, point, "a source is missing")
            for reference, rows in window.items():
                keys = set(rows)
                assert keys <= old[reference] | new[reference], (point, reference, "rows of no version")
                assert old[reference] <= keys or new[reference] <= keys, (point, reference, "neither version whole")
            assert_searches_find_one_whole_version(uri, old, new)  # the next process, before any re-run
        run_load(corpus, uri)
        assert {reference: frozenset(rows) for reference, rows in stored(uri).items()} == new, points


def assert_searches_find_one_whole_version(uri: Path, old: dict[str, Keys], new: dict[str, Keys]) -> None:
    """A search over everything, in a fresh store object, finds each source's chunks of one version,
    all of them: the partial new version a kill left behind stays hidden (the stored marker)."""
    store = Milvus(uri=str(uri))
    try:
        hits = store.search_data(COLLECTION, HashEmbedding().embed_query("item"), top_k=500)
    finally:
        store.close()
    found: dict[str, set[tuple[int | None, str]]] = {}
    for hit in hits:
        found.setdefault(hit.reference, set()).add((hit.metadata.get("chunk_index"), hit.metadata["chunk_key"]))
    assert set(found) == set(old), "a source is missing from the search"
    for reference, keys in found.items():
        assert keys in (old[reference], new[reference]), (reference, "a search found no one whole version")


STALE_STATE = """
import os, sys
import milvus_lite.storage.wal as wal
from deepsearcher.types import Chunk
from deepsearcher.vector_db.milvus import Milvus

def chunk(i):
    return Chunk(text=f"t{i}", reference="r", embedding=[1.0, float(i), 0.0, 0.0])

store = Milvus(uri=sys.argv[1])
store.init_collection(dim=4, collection="kb")
store.insert_data("kb", [chunk(i) for i in range(6)])  # flushed (insert_data seals on Lite)
client = store._client()
client.delete("kb", ids=[row["id"] for row in client.query("kb", filter="", output_fields=["id"], limit=3)])
remove = os.remove

def remove_then_die(path, *args, **kwargs):  # killed after the WAL's data file went, before its delete file
    remove(path, *args, **kwargs)
    if "wal_data" in os.fspath(path):
        os._exit(9)

wal.os.remove = remove_then_die
store.insert_data("kb", [chunk(6), chunk(7)])  # its flush commits the delete and the insert, then dies
"""


def test_a_flush_after_a_half_deleted_write_ahead_log_goes_through(tmp_path: Path) -> None:
    """milvus-lite killed between deleting a flushed WAL's two files leaves its deletes behind; the
    next process used to fail its first flush ("current_seq is monotonic; tried to set 7 < 9")."""
    uri = tmp_path / "stale.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    killed = subprocess.run([sys.executable, "-c", STALE_STATE, str(uri)], env=env, capture_output=True, timeout=120)
    assert killed.returncode == 9, killed.stderr[-2000:]
    assert [path.name.split("_0")[0] for path in uri.rglob("wal_*")] == ["wal_delta"]
    store = Milvus(uri=str(uri))
    try:
        store.flush("kb")
        assert store.count("kb") == 5  # 6 stored, 3 deleted, 2 added
        store.delete_ids("kb", [store.stored_chunks("kb", "r")[0].id])
        assert store.count("kb") == 4
    finally:
        store.close()


def test_a_search_during_a_replacement_finds_exactly_one_whole_version(tmp_path: Path) -> None:
    """The server's case: its searches share the store object with its load jobs. At every batch of a
    re-load of changed documents, a search over everything finds each source in one version, whole."""
    embedding = HashEmbedding()
    store = Milvus(uri=str(tmp_path / "m.db"))
    sizes = {"chunk_size": 200, "chunk_overlap": 0, "batch_size": 4}

    def sources(version: int) -> list[LoadedSource]:
        return versioned_sources(version, (("a", 5), ("b", 16)))

    seen: list[dict[str, Counter]] = []

    def search_now(event: str, info: dict) -> None:
        if event == "embedded":
            hits = store.search_data(COLLECTION, embedding.embed_query("item"), top_k=100)
            seen.append(dict(Counter((hit.reference, hit.metadata["source_hash"]) for hit in hits)))

    try:
        IngestionPipeline(embedding, store, **sizes).run(sources(1), COLLECTION)
        versions = {1: stored_versions(store), 2: {}}
        IngestionPipeline(embedding, store, on_progress=search_now, **sizes).run(sources(2), COLLECTION)
        versions[2] = stored_versions(store)
        whole = {
            (reference, version_hash): count
            for v in versions.values()
            for reference, (version_hash, count) in v.items()
        }
        assert len(seen) >= 4  # searched at every batch of the re-load
        for found in seen:
            assert {reference for reference, _ in found} == {"a", "b"}, found  # never missing
            for (reference, version_hash), count in found.items():
                assert whole.get((reference, version_hash)) == count, (found, whole)  # one version, whole
        assert any(
            (reference, h) in whole and h == versions[2][reference][0] for found in seen for reference, h in found
        )
        assert not store._hidden.get(COLLECTION)  # nothing stays hidden once the run is over
    finally:
        store.close()


def versioned_sources(version: int, sizes: tuple[tuple[str, int], ...], repeat: int = 3) -> list[LoadedSource]:
    """Sources named as in `sizes`, of that many parts each; every part changes between versions and,
    with chunk_size 200, is a chunk of its own."""

    def part(name: str, i: int) -> str:
        return f"Version {version} of {name}, part {i}: item {i * version} is described here " * repeat

    return [LoadedSource(name, [Document("\n\n".join(part(name, i) for i in range(n)))]) for name, n in sizes]


def stored_versions(store: Milvus) -> dict[str, tuple[str, int]]:
    """Per source: its one stored version and how many chunks it has."""
    result = {}
    for reference, record in store.list_sources(COLLECTION).items():
        assert record.versions == 1 and record.complete
        result[reference] = (record.source_hash, record.chunk_count)
    return result
