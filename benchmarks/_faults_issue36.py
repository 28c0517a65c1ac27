"""The issue-36 fault probes, run by benchmarks/faults.py (`--only replace-window` and so on):

- replace-window: SIGKILLs of `deepsearcher load` at batches drawn at random while it re-loads changed files
  (and again while it resumes); in every window between a kill and the next run each source is
  read back in a fresh process and classed old-whole / new-whole / missing / partial / a row twice.
- half-deleted-wal: milvus-lite killed between deleting a flushed write-ahead log's two files;
  the next run's first flush used to fail ("current_seq is monotonic").
- drop-race: a server hammered with search / query / SSE while the collection is dropped: 5xx count.
- small-refusals: an encrypted DOCX, a DOCX without a Word body, a config uri under a missing tree.
- version-readers: on the Milvus 2.3.5 and milvus-lite 2.5.1 TCP servers, a second process searches
  in a loop while re-loads of changed files are SIGKILLed under it (run under flock /tmp/milvus-server.lock).
- marker-cost: search p50 with the stored version marker and without, side by side.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from deepsearcher.testing.crash_points import CRASH_ENV

Row = Callable[[str, str, str, bool], None]

_KEYS_SCRIPT = """
import json, sys
from collections import Counter
from deepsearcher.vector_db.milvus import Milvus
store = Milvus(uri=sys.argv[1])
result = {}
for reference in store.list_sources("kb"):
    rows = store.stored_chunks("kb", reference)
    result[reference] = {"keys": sorted({f"{r.chunk_index}:{r.chunk_key}" for r in rows}),
                         "twice": max(Counter(r.id for r in rows).values()) > 1}
store.close()
print(json.dumps(result))
"""


def _keys(uri: Path, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-c", _KEYS_SCRIPT, str(uri)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"reading the store failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _version(folder: Path, version: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, paragraphs in (("a", 4), ("b", 8), ("c", 12), ("long", 60)):
        text = "\n\n".join(
            f"Version {version} of {name}, paragraph {i}: item {i * version} is described in plain words."
            for i in range(paragraphs)
        )
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")


def probe_replace_window(base: Path, row: Row, env: dict[str, str], write_config: Any, trials: int) -> None:
    docs = base / "docs"
    command = [sys.executable, "-m", "deepsearcher.cli.main", "load", str(docs), "--collection", "kb"]
    versions: list[dict[str, set[str]]] = []
    for version in (1, 2):
        _version(docs, version)
        folder = base / f"clean{version}"
        folder.mkdir()
        subprocess.run([*command, "-c", str(write_config(folder))], env=env, capture_output=True, check=True)
        versions.append({ref: set(item["keys"]) for ref, item in _keys(folder / "milvus.db", env).items()})
    old, new = versions
    batches = max(1, sum(len(keys) for keys in new.values()) // 4)  # write_config's batch_size
    rng = random.Random(36)
    tally: Counter = Counter()
    failures: list[str] = []
    for trial in range(trials):
        folder = base / f"trial{trial}"
        folder.mkdir()
        config = write_config(folder)
        _version(docs, 1)
        subprocess.run([*command, "-c", str(config)], env=env, capture_output=True, check=True)
        _version(docs, 2)
        for _ in range(3):  # killed while replacing, then while resuming, twice: at a batch drawn at random
            point = f"{rng.choice(('embedded', 'inserted'))}:{rng.randint(1, batches)}"
            crash_env = {**env, CRASH_ENV: point}
            process = subprocess.Popen(
                [*command, "-c", str(config)], env=crash_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            _, stderr = process.communicate(timeout=300)
            if process.returncode != -signal.SIGKILL:
                if process.returncode != 0:
                    failures.append(stderr.decode(errors="replace").strip().splitlines()[-1][:100])
                tally["finished before the kill"] += 1
                continue
            tally["kills"] += 1
            stored = _keys(folder / "milvus.db", env)
            for reference in old:
                keys = set(stored.get(reference, {}).get("keys", ()))
                if stored.get(reference, {}).get("twice"):
                    tally["a row twice"] += 1
                if not keys:
                    tally["missing"] += 1
                elif old[reference] <= keys or new[reference] <= keys:
                    tally["whole"] += 1
                else:
                    tally["partial"] += 1
        final = subprocess.run([*command, "-c", str(config)], env=env, capture_output=True, text=True)
        if final.returncode != 0:
            failures.append(final.stderr.strip().splitlines()[-1][:100])
        exact = {ref: set(item["keys"]) for ref, item in _keys(folder / "milvus.db", env).items()} == new
        tally["exact after rerun"] += exact
    windows = tally["whole"] + tally["missing"] + tally["partial"]
    row(
        "SIGKILL at random batches during a re-load of changed files",
        "every source old-whole or new-whole in every window; 0 missing, 0 partial, 0 rows twice",
        f"{tally['kills']} kills ({tally['finished before the kill']} runs ended first), {windows} source-windows: "
        f"{tally['whole']} whole, {tally['missing']} missing, {tally['partial']} partial, {tally['a row twice']} twice",
        tally["kills"] > 0 and windows == tally["whole"] and not tally["a row twice"],
    )
    row(
        "resumed re-loads after those kills",
        f"{trials} of {trials} exact, no run fails",
        f"{tally['exact after rerun']} of {trials} exact, {len(failures)} failed"
        + (f": {failures[0]}" if failures else ""),
        tally["exact after rerun"] == trials and not failures,
    )


_STALE_WAL = """
import os, sys
import milvus_lite.storage.wal as wal
from deepsearcher.types import Chunk
from deepsearcher.vector_db.milvus import Milvus

def chunk(i):
    return Chunk(text=f"t{i}", reference="r", embedding=[1.0, float(i), 0.0, 0.0])

store = Milvus(uri=sys.argv[1])
store.init_collection(dim=4, collection="kb")
store.insert_data("kb", [chunk(i) for i in range(6)])
client = store._client()
client.delete("kb", ids=[row["id"] for row in client.query("kb", filter="", output_fields=["id"], limit=3)])
remove = os.remove

def remove_then_die(path, *args, **kwargs):
    remove(path, *args, **kwargs)
    if "wal_data" in os.fspath(path):
        os._exit(9)

wal.os.remove = remove_then_die
store.insert_data("kb", [chunk(6), chunk(7)])
"""

_FLUSH_AFTER = """
import sys
from deepsearcher.vector_db.milvus import Milvus
store = Milvus(uri=sys.argv[1])
store.flush("kb")
print(store.count("kb"))
store.close()
"""


def probe_half_deleted_wal(base: Path, row: Row, env: dict[str, str]) -> None:
    uri = base / "stale.db"
    killed = subprocess.run([sys.executable, "-c", _STALE_WAL, str(uri)], env=env, capture_output=True)
    left = sorted(path.name.split("_0")[0] for path in uri.rglob("wal_*"))
    after = subprocess.run([sys.executable, "-c", _FLUSH_AFTER, str(uri)], env=env, capture_output=True, text=True)
    outcome = after.stdout.strip() if after.returncode == 0 else after.stderr.strip().splitlines()[-1][:100]
    row(
        "killed between a WAL's data and delete files, then flush",
        "the flush goes through, 5 rows",
        f"killed rc {killed.returncode}, left {left}; next flush: rc {after.returncode}, {outcome}",
        killed.returncode == 9 and after.returncode == 0 and outcome == "5",
    )


def probe_drop_race(base: Path, row: Row, serve: Callable[[Path, Path], Any], rounds: int) -> None:
    from deepsearcher.testing.race_clients import KINDS, hammer
    from deepsearcher.testing.scripted_llm import ScriptedLLMServer

    root = base / "root"
    root.mkdir()
    for index in range(4):
        (root / f"n{index}.txt").write_text(f"Grace Hopper note {index} built the first compiler. " * 20)
    seen: Counter = Counter()
    with ScriptedLLMServer(fallback="YES") as llm:
        llm.on("numbered sources", "Grace Hopper built it [1].")
        server = serve(base, root, llm=llm.llm_config()).start()
        try:
            for _ in range(rounds):
                job = httpx.post(server.url + "/v1/load", json={"inputs": [str(root)], "collection": "kb"}).json()
                while httpx.get(f"{server.url}/v1/jobs/{job['job_id']}").json()["status"] in ("queued", "running"):
                    time.sleep(0.05)
                stop = threading.Event()
                threads = [threading.Thread(target=hammer, args=(server.url, kind, stop, seen)) for kind in KINDS]
                for thread in threads:
                    thread.start()
                time.sleep(0.5)
                httpx.delete(server.url + "/v1/collections/kb", timeout=30)
                time.sleep(0.5)
                stop.set()
                for thread in threads:
                    thread.join()
        finally:
            server.stop()
    total = sum(seen.values())
    errors = sum(count for (_, status), count in seen.items() if not isinstance(status, int))
    by_status = Counter()
    for (_, status), count in seen.items():
        by_status[status] += count
    row(
        "requests racing a collection drop (search, query, SSE, sources)",
        "404 / 409, never 500",
        f"{total} requests over {rounds} drops: {dict(sorted(by_status.items(), key=str))}; {errors} 5xx",
        errors == 0 and total > 0,
    )


def probe_small_refusals(base: Path, row: Row) -> None:
    import docx

    from deepsearcher.loader.file_loader.docx_loader import DocxLoader
    from deepsearcher.testing.hostile_files import encrypted_docx, foreign_body_docx
    from deepsearcher.types import ConfigurationError, LoaderError
    from deepsearcher.vector_db.milvus import Milvus

    plain = base / "plain.docx"
    document = docx.Document()
    document.add_paragraph("Plans.")
    document.save(plain)
    cases = [("DOCX whose main part is not a Word body", foreign_body_docx(base / "foreign.docx", plain))]
    try:
        cases.append(("encrypted DOCX", encrypted_docx(base / "locked.docx")))
    except ImportError:
        row("encrypted DOCX", "named as password-protected", "msoffcrypto-tool not installed (pip install)", False)
    for name, path in cases:
        try:
            DocxLoader().load_file(path)
            reason = "loaded"
        except LoaderError as exc:
            reason = str(exc).split(": ", 1)[1]
        except Exception as exc:  # noqa: BLE001 - what the probe reports
            reason = f"{type(exc).__name__}: {exc}"
        readable = "Error" not in reason and "zip file" not in reason and reason != "loaded"
        row(f"{name} refused", "a reason a user can act on", reason[:90], readable)
    uri = base / "typo" / "deeper" / "store" / "milvus.db"
    try:
        Milvus(uri=str(uri)).close()
        outcome = "opened"
    except ConfigurationError as exc:
        outcome = str(exc)[:90]
    row(
        "config uri under a missing folder tree",
        "one clear error, no folder made",
        f"{outcome}; folders made: {(base / 'typo').exists()}",
        outcome.startswith("The folder") and not (base / "typo").exists(),
    )


def _sources(uri: str, collection: str) -> dict[str, tuple[str, int]]:
    from deepsearcher.vector_db.milvus import Milvus

    store = Milvus(uri=uri)
    try:
        return {ref: (record.source_hash, record.chunk_count) for ref, record in store.list_sources(collection).items()}
    finally:
        store.close()


def probe_version_readers(base: Path, row: Row, env: dict[str, str], write_config: Any, kills: int) -> None:
    """A second process searching in a loop on each Milvus server while re-loads of changed files are
    SIGKILLed at random batches under it: what every answer held, per source."""
    from deepsearcher.testing.milvus_servers import ServerPool
    from deepsearcher.testing.version_reader import classify
    from deepsearcher.vector_db.milvus import Milvus

    docs = base / "docs"
    pool = ServerPool()
    try:
        for name in ("milvus-2.3.5", "milvus-lite-2.5.1-tcp"):
            uri = pool.get(name).uri
            folder = base / name
            folder.mkdir()
            config = write_config(folder)
            text = config.read_text(encoding="utf-8").replace(str(folder / "milvus.db"), uri)
            config.write_text(text, encoding="utf-8")
            store = Milvus(uri=uri)
            store.clear_db("kb")
            store.close()
            command = [sys.executable, "-m", "deepsearcher.cli.main", "load", str(docs), "--collection", "kb"]
            _version(docs, 1)
            subprocess.run([*command, "-c", str(config)], env=env, capture_output=True, check=True)
            old = _sources(uri, "kb")
            out, stop = folder / "reader.jsonl", folder / "stop"
            reader = subprocess.Popen(
                [sys.executable, "-m", "deepsearcher.testing.version_reader", uri, "kb", str(out), str(stop)], env=env
            )
            _version(docs, 2)
            rng = random.Random(36)
            killed = 0
            for attempt in range(kills):
                point = f"{rng.choice(('embedded', 'inserted'))}:{rng.randint(1, 12 if attempt == 0 else 3)}"
                done = subprocess.run([*command, "-c", str(config)], env={**env, CRASH_ENV: point}, capture_output=True)
                killed += done.returncode == -signal.SIGKILL
                time.sleep(0.5)
            subprocess.run([*command, "-c", str(config)], env=env, capture_output=True, check=True)
            new = _sources(uri, "kb")
            time.sleep(1.0)
            stop.touch()
            reader.wait(timeout=60)
            tally = classify(out.read_text(encoding="utf-8").splitlines(), old, new)
            bad = tally["missing"] + tally["partial"] + tally["two versions"]
            row(
                f"another process searching during killed re-loads ({name})",
                "each source old-whole or new-whole in every answer",
                f"{killed} kills, {sum(tally.values())} source-answers: {tally['old whole']} old whole, "
                f"{tally['new whole']} new whole, {tally['missing']} missing, {tally['partial']} partial, "
                f"{tally['two versions']} two versions; reader rc {reader.returncode}",
                killed > 0 and bad == 0 and reader.returncode == 0 and tally["new whole"] > 0,
            )
    finally:
        pool.stop_all()


def probe_marker_cost(base: Path, row: Row, rows: int, searches: int) -> None:
    """Search p50 with the version marker (as shipped) and without it (the same store, the marker's
    reads skipped), side by side on `rows` chunks: embedded Milvus Lite and the two servers."""
    import statistics

    from deepsearcher.testing.hash_embedding import HashEmbedding
    from deepsearcher.testing.milvus_servers import ServerPool
    from deepsearcher.types import Chunk
    from deepsearcher.vector_db.milvus import Milvus

    embedding = HashEmbedding()
    texts = [f"chunk {i} about item {i % 97} in words" for i in range(rows)]
    vectors = embedding.embed_documents(texts)
    chunks = [
        Chunk(text=t, reference=f"s{i % 50}", embedding=v, metadata={"source_hash": f"h{i % 50}", "source_chunks": 1})
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    ]
    queries = [embedding.embed_query(f"item {i}") for i in range(searches)]
    pool = ServerPool()
    try:
        for name, uri in (
            ("milvus-lite embedded", str(base / "m.db")),
            ("milvus-2.3.5", pool.get("milvus-2.3.5").uri),
            ("milvus-lite-2.5.1-tcp", pool.get("milvus-lite-2.5.1-tcp").uri),
        ):
            store = Milvus(uri=uri)
            store.clear_db("cost")
            store.init_collection(dim=embedding.dimension, collection="cost")
            store.insert_data("cost", chunks)
            store.hide_versions("cost", {"h-old"})  # the first move creates the marker's collection
            moved = time.perf_counter()
            store.hide_versions("cost", {"h-pending"}, show={"h-old"})  # a switch: rows made visible first
            store.hide_versions("cost", (), show={"h-pending"})
            store.hide_versions("cost", {"h-pending"})  # a replacement in progress: the marker filters
            move_ms = (time.perf_counter() - moved) / 3 * 1000
            timings: dict[str, list[float]] = {"with": [], "without": []}
            for query in queries:
                for mode in ("with", "without"):  # interleaved: same load on the machine for both
                    if mode == "without":
                        store._pin.on, store._pin.hidden = True, frozenset()  # no marker read, no filter
                    started = time.perf_counter()
                    store.search_data("cost", query, top_k=10)
                    timings[mode].append(time.perf_counter() - started)
                    store._pin.on = False
            store.clear_db("cost")
            store.close()
            p50 = {mode: statistics.median(values) * 1000 for mode, values in timings.items()}
            row(
                f"search p50 with / without the version marker ({name}, {rows:,} rows)",
                "a few ms at most",
                f"{p50['with']:.2f} ms / {p50['without']:.2f} ms, ratio {p50['with'] / p50['without']:.2f}; "
                f"one marker move (a load does 3 per changed source) {move_ms:.0f} ms",
                p50["with"] - p50["without"] < 10,
            )
    finally:
        pool.stop_all()
