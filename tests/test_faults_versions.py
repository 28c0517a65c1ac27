"""Every reader, in every process, sees a changed source as its old version whole or its new one
whole, during a re-load and after the re-load is killed (the stored version marker,
vector_db/_milvus_versions.py).

On the Milvus servers (2.3.5, and the milvus-lite 2.5.1 engine over TCP) a second process
searches in a loop while `deepsearcher load` of changed files is SIGKILLed at random batches
(seeded), killed again while resuming, then run to the end; every answer it got must hold
each source in exactly one version, with all of that version's chunks. Embedded Milvus Lite
takes one process at a time: there the reader comes after each kill (test_replace_window).
Run under `flock /tmp/milvus-server.lock` (the servers' ports). Stand-in: HashEmbedding, as in
test_replace_window; the store, the servers and the killed CLI are real.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import components_for
from test_crash_injection import config
from test_replace_window import COLLECTION, ROOT, kill_load, write_version

from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.testing.version_reader import Versions, classify
from deepsearcher.vector_db.milvus import Milvus

SEED = 3636


def load_into(corpus: Path, uri: str, config_path: Path) -> Versions:
    """Load `corpus` to the end; each source's one stored version and its chunk count."""
    components = components_for(config(config_path, uri))  # type: ignore[arg-type]
    try:
        summary = load(components, LoadRequest(inputs=[str(corpus)], collection=COLLECTION))
        assert summary.ok, summary.to_dict()["failed"]
        records = components.vector_db.list_sources(COLLECTION)
        assert all(record.versions == 1 and record.complete for record in records.values())
        return {reference: (record.source_hash, record.chunk_count) for reference, record in records.items()}
    finally:
        components.vector_db.close()


@pytest.mark.parametrize("server", ["milvus-2.3.5", "milvus-lite-2.5.1-tcp"])
def test_another_process_sees_one_whole_version_while_a_reload_is_killed(
    server: str, milvus_servers, tmp_path: Path
) -> None:
    uri = milvus_servers.get(server).uri
    store = Milvus(uri=uri)
    store.clear_db(COLLECTION)
    store.close()
    corpus = tmp_path / "docs"
    write_version(corpus, 1)
    old = load_into(corpus, uri, tmp_path / "old.yaml")
    write_version(corpus, 2)
    new = load_into(corpus, str(tmp_path / "expected.db"), tmp_path / "expected.yaml")  # what version 2 holds
    assert all(old[reference][0] != new[reference][0] for reference in old)

    out, stop = tmp_path / "reader.jsonl", tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    reader = subprocess.Popen(
        [sys.executable, "-m", "deepsearcher.testing.version_reader", uri, COLLECTION, str(out), str(stop)],
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text(encoding="utf-8").count("\n") >= 2):
            assert reader.poll() is None and time.monotonic() < deadline, "the reader did not start searching"
            time.sleep(0.1)
        rng = random.Random(SEED + len(server))
        batches = sum(count for _, count in new.values()) // 4  # batch_size 4 in test_crash_injection's config
        # killed while replacing, then early in the resumed run (it has fewer batches left)
        for last in (batches, 2):
            point = f"{rng.choice(('embedded', 'inserted'))}:{rng.randint(1, last)}"
            kill_load(corpus, uri, point, tmp_path)  # type: ignore[arg-type]
            time.sleep(0.5)  # the reader searches the window between the kill and the next run
        assert load_into(corpus, uri, tmp_path / "final.yaml") == new
        before = out.read_text(encoding="utf-8").count("\n")
        while out.read_text(encoding="utf-8").count("\n") < before + 2:
            assert reader.poll() is None, "the reader stopped"
            time.sleep(0.1)
    finally:
        stop.touch()
        _, errors = reader.communicate(timeout=60)
    assert reader.returncode == 0, errors.decode()[-2000:]
    tally = classify(out.read_text(encoding="utf-8").splitlines(), old, new)
    assert set(tally) == {"old whole", "new whole"}, tally  # never missing, partial or two versions
