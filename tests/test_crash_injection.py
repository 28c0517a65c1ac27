"""Crash-exact ingestion: a real `deepsearcher load` process is SIGKILLed at 20 points (after
each batch is embedded, and after each is stored; most of them inside one big file), then
the load is run again; the store must then hold exactly the chunks of a clean load, none
twice, and the rerun must embed only the chunks that were missing.

Stand-in: the processes use `deepsearcher.testing.hash_embedding` instead of the bundled
model, whose loading would cost seconds in each of the 20 processes; what is checked here
(which rows are stored, how many were embedded) does not depend on the vectors. The store
is real Milvus Lite in a temp dir and the killed process is the real CLI.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers import components_for

from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.testing.crash_points import CRASH_ENV
from deepsearcher.vector_db.milvus import Milvus

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"chunk_size": 200, "chunk_overlap": 0, "batch_size": 4}
BATCHES = 10
POINTS = [f"{stage}:{batch}" for batch in range(1, BATCHES + 1) for stage in ("embedded", "inserted")]
COLLECTION = "crash"


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("a", "b", "c"):
        (folder / f"{name}.txt").write_text(
            f"Small file {name}: a single short paragraph about {name}.\n", encoding="utf-8"
        )
    paragraphs = [
        f"Paragraph {i} of the big file describes item number {i} with enough words to fill it." for i in range(70)
    ]
    (folder / "big.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return folder


def config(path: Path, uri: Path) -> Path:
    path.write_text(
        "provide_settings:\n"
        "  embedding:\n    provider: deepsearcher.testing.hash_embedding:HashEmbedding\n    config: {}\n"
        f"  vector_db:\n    provider: Milvus\n    config:\n      uri: '{uri}'\n"
        "load_settings:\n" + "".join(f"  {key}: {value}\n" for key, value in SIZES.items()),
        encoding="utf-8",
    )
    return path


def rerun(corpus: Path, uri: Path):
    """The load again, through the use case `deepsearcher load` runs (same loader, parser and
    fingerprints as the killed process), in this process so its summary can be read."""
    components = components_for(config(uri.with_suffix(".yaml"), uri))
    store = components.vector_db
    try:
        summary = load(components, LoadRequest(inputs=[str(corpus)], collection=COLLECTION))
        return summary, snapshot(store, summary)
    finally:
        store.close()


def snapshot(store: Milvus, summary) -> dict[str, Counter]:
    """Per source: how often each (chunk index, chunk key) is stored, and how often each id."""
    result = {}
    for reference in sorted(store.list_sources(COLLECTION)):
        rows = store.stored_chunks(COLLECTION, reference)
        assert max(Counter(row.id for row in rows).values()) == 1, f"an id of {reference} is stored twice"
        result[reference] = Counter((row.chunk_index, row.chunk_key) for row in rows)
    result["(rows)"] = Counter({"count": store.count(COLLECTION)})
    return result


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("crash")
    corpus = write_corpus(base / "docs")
    summary, stored = rerun(corpus, base / "clean.db")
    assert summary.embeddings_computed > (BATCHES - 1) * SIZES["batch_size"], (
        "the corpus must fill every kill point's batch"
    )
    assert all(count == 1 for reference, counts in stored.items() if reference != "(rows)" for count in counts.values())
    return corpus, summary, stored


@pytest.mark.parametrize("point", POINTS)
def test_killed_load_reruns_to_exactly_the_clean_store(point: str, clean, tmp_path: Path) -> None:
    corpus, clean_summary, clean_store = clean
    uri = tmp_path / "milvus.db"
    env = {**os.environ, CRASH_ENV: point, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [
        sys.executable,
        "-m",
        "deepsearcher.cli.main",
        "load",
        str(corpus),
        "--collection",
        COLLECTION,
        "-c",
        str(config(tmp_path / "c.yaml", uri)),
        "--json",
    ]
    killed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]

    summary, stored = rerun(corpus, uri)
    assert stored == clean_store
    total = clean_summary.embeddings_computed
    # nothing embedded twice: each chunk was kept (a resumed file), stored whole (an unchanged file) or embedded
    assert summary.chunks_kept + summary.chunks_unchanged + summary.embeddings_computed == total
    stage, batch = point.split(":")
    # "embedded:N": batch N-1 may still have been on its way to the store (the writer overlaps)
    at_least_stored = min(total, max(0, int(batch) - 2 if stage == "embedded" else int(batch)) * SIZES["batch_size"])
    assert summary.chunks_kept + summary.chunks_unchanged >= at_least_stored - summary.duplicates_removed
