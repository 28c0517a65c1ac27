"""How the cost of the store grows with the corpus: Milvus Lite (index chosen by size, and FLAT
beside it) vs. a Milvus 2.3.5 server.

    flock /tmp/heavy.lock python benchmarks/scale.py [--lite 10000,100000,1000000] [--flat 100000]
                                                     [--server 10000,100000] [--dim 384] [--queries 100]
                                                     [--timeout 3600] [--keep-dir DIR] [--own 20]

Synthetic corpora, no embedding model: clustered unit vectors (1,000 centres, each vector a
centre plus noise: neighbours in a cluster have cosine ~0.5, as sentence embeddings of one
topic do; uniform random vectors would have no meaningful nearest neighbours) and generated
text (Zipf-like words from a fixed vocabulary, plus one rare token per chunk), inserted
through the store's own `insert_data`. Queries are fresh points drawn the same way. For each
store and size N, in a child process of its own: insert rate, the index the store chose
after the load (`fit_index`, as `deepsearcher load` calls it) and the seconds it took, p50/p95
latency of --queries (100) dense and hybrid searches (top 10), recall@10 of the dense search
against the exact top 10 (computed here with numpy, batch by batch as rows are generated),
RSS (this process for Lite, which runs in-process; the server's process tree for the server),
disk used, and the time to reopen (Lite: close, open the database again and answer one
search; server: a new connection, release + load of the collection and one search). With --own K,
the first K searches of each series run again through milvus-lite's own search code (our speed-up,
deepsearcher/vector_db/_milvus_lite_speed.py, uninstalled): their p50 beside ours (columns "own
dense" / "own hybrid"; p95 in the STAGE line) and whether all K return the same rows and scores. Then the
growth of each figure per 10x of N. The 2.3.5 server has no BM25 / hybrid_search, so its
hybrid column is empty. "strong p50" is the dense p50 of a store opened with
search_consistency="Strong", on the server only (Milvus Lite has no consistency levels).

Each child prints a STAGE line (JSON) as soon as a figure is known (every 100k rows inserted,
then each search series, RSS, reopen); the parent echoes them at once, so a run stopped by
--timeout still shows how far it got. With --keep-dir the Lite databases are kept there
(DIR/<kind>-<N>/) and a later run with the same DIR resumes inserting where the stopped one
ended (rows are generated per batch from a fixed seed, so what was stored is regenerated for
the exact answers, not inserted again): a 1M run can be done in several sittings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BATCH = 5000
QUERIES = 100
TOP_K = 10
PROGRESS_EVERY = 100_000  # rows between insert progress lines


def stage(name: str, **figures: object) -> None:
    """One figure as soon as it is measured (see the module docstring)."""
    print("STAGE " + json.dumps({"stage": name, **figures}), flush=True)


def vocabulary(size: int = 5000) -> list[str]:
    import random

    rng = random.Random(11)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]


def texts(start: int, count: int, words: list[str], rng) -> list[str]:
    """Chunks of ~60 words drawn Zipf-like from `words`, each with its own rare token."""
    import numpy as np

    ranks = np.minimum(rng.zipf(1.3, size=(count, 60)) - 1, len(words) - 1)
    return [" ".join(words[r] for r in row) + f" tok{start + i}" for i, row in enumerate(ranks)]


def unit_vectors(rng, count: int, dim: int):
    import numpy as np

    vectors = rng.standard_normal((count, dim)).astype("float32")
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


CLUSTERS = 1000
NOISE = 1.0  # noise norm relative to the centre's: cosine to the centre ~0.71, between neighbours ~0.5


def centres(dim: int):
    import numpy as np

    return unit_vectors(np.random.default_rng(1234), CLUSTERS, dim)


def clustered(rng, count: int, centre_vectors):
    """`count` unit vectors, each a random centre plus Gaussian noise (see the module docstring)."""
    import numpy as np

    picks = rng.integers(0, len(centre_vectors), count)
    noise = unit_vectors(rng, count, centre_vectors.shape[1]) * NOISE
    vectors = centre_vectors[picks] + noise
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype("float32")


class ExactTop:
    """The exact top-k (cosine) of each query over every row generated so far, kept per batch."""

    def __init__(self, queries, k: int) -> None:
        import numpy as np

        self.queries = queries
        self.k = k
        self.scores = np.full((len(queries), k), -np.inf, dtype="float32")
        self.rows = np.full((len(queries), k), -1, dtype="int64")

    def add(self, start: int, vectors) -> None:
        import numpy as np

        scores = self.queries @ vectors.T
        merged_scores = np.concatenate([self.scores, scores], axis=1)
        merged_rows = np.concatenate(
            [self.rows, np.broadcast_to(np.arange(start, start + len(vectors)), scores.shape)], axis=1
        )
        best = np.argsort(-merged_scores, axis=1)[:, : self.k]
        self.scores = np.take_along_axis(merged_scores, best, axis=1)
        self.rows = np.take_along_axis(merged_rows, best, axis=1)

    def recall(self, found: list[list[int]]) -> float:
        hits = sum(len(set(row.tolist()) & set(got)) for row, got in zip(self.rows, found, strict=False))
        return hits / (self.k * len(found))


def dir_size(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            file = os.path.join(folder, name)
            if os.path.isfile(file):  # a file removed meanwhile (compaction) counts as gone
                total += os.path.getsize(file)
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def tree_rss(pid: int) -> int:
    import psutil

    proc = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])


@dataclass(frozen=True)
class Case:
    """One store and size to measure, in a child process of its own."""

    kind: str
    n: int
    uri: str
    #: Where the store keeps its files (its disk use is measured there).
    data_dir: str = ""
    dim: int = 384
    #: The server's process (its tree's RSS is measured); None for Milvus Lite, which runs in the child.
    server_pid: int | None = None
    queries: int = QUERIES
    #: The store's index_type: AUTO (chosen by size) or FLAT.
    index_type: str = "AUTO"
    #: Searches of each series repeated through milvus-lite's own search code (0: none; Lite only).
    own_queries: int = 0


def measure(case: Case) -> dict:
    """One store, one size: runs in a child process (see the module docstring)."""
    kind, n, dim, uri, data_dir = case.kind, case.n, case.dim, case.uri, case.data_dir
    server_pid, queries_n, index_type = case.server_pid, case.queries, case.index_type
    import numpy as np
    import psutil

    from deepsearcher.types import Chunk
    from deepsearcher.vector_db.milvus import Milvus

    words = vocabulary()
    centre_vectors = centres(dim)
    query_rng = np.random.default_rng(99)
    queries = clustered(query_rng, queries_n, centre_vectors)
    exact = ExactTop(queries, TOP_K)
    store = Milvus(uri=uri, index_type=index_type)
    resumed = store.has_collection("scale") and not server_pid
    store.init_collection(dim, "scale", embedding_model="random-unit", force_new_collection=not resumed)
    stored = 0
    if resumed:
        stored = store.count("scale")
        stored -= stored % BATCH
        store.delete_by_reference("scale", f"b{stored // BATCH}")  # a batch cut short by the stop
        stage("resumed", rows=stored)
    started = time.perf_counter()
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        rng = np.random.default_rng((n, start))
        vectors = clustered(rng, count, centre_vectors)
        exact.add(start, vectors)
        if start < stored:
            continue
        chunks = [
            Chunk(
                text=text,
                reference=f"b{start // BATCH}",
                embedding=vector,
                metadata={"source_hash": "h", "source_chunks": BATCH, "row": start + i},
            )
            for i, (text, vector) in enumerate(zip(texts(start, count, words, rng), vectors.tolist(), strict=False))
        ]
        store.insert_data("scale", chunks, batch_size=1000)
        done = start + count
        if done % PROGRESS_EVERY == 0 and done < n:
            elapsed = time.perf_counter() - started
            stage("insert", rows=done, seconds=round(elapsed, 1), rows_per_s=round((done - stored) / elapsed))
    store.flush("scale")  # on disk before the clock stops (Lite flushes each insert already)
    insert_seconds = time.perf_counter() - started
    stage("inserted", rows=n, seconds=round(insert_seconds, 1), rows_per_s=round((n - stored) / insert_seconds))
    t0 = time.perf_counter()
    declared = store.fit_index("scale")
    index_seconds = time.perf_counter() - t0
    index = store.dense_index("scale")
    stage("index", index=index, declared_now=bool(declared), seconds=round(index_seconds, 1))
    disk = dir_size(data_dir)
    version = store.capabilities.version

    query_texts = [
        " ".join(words[i] for i in query_rng.integers(0, 200, 3)) + f" tok{int(query_rng.integers(0, n))}"
        for _ in range(queries_n)
    ]
    timings: dict[str, list[float]] = {"dense": [], "hybrid": [], "strong": []}
    strong = Milvus(uri=uri, search_consistency="Strong")  # how every search ran before Session became the default
    runs = [("dense", store, "dense")] + ([("strong", strong, "dense")] if server_pid else [])
    runs += [("hybrid", store, "hybrid")] if store.capabilities.bm25 else []
    found: list[list[int]] = []
    for label, searcher, mode in runs:
        searcher.search_data("scale", queries[0].tolist(), top_k=TOP_K, query_text=query_texts[0], mode=mode)
        for vector, text in zip(queries.tolist(), query_texts, strict=False):
            t0 = time.perf_counter()
            hits = searcher.search_data("scale", vector, top_k=TOP_K, query_text=text, mode=mode)
            timings[label].append(time.perf_counter() - t0)
            if label == "dense":
                found.append([int(hit.metadata.get("row", -1)) for hit in hits])
        stage(
            label,
            p50_ms=round(percentile(timings[label], 0.5) * 1000, 1),
            p95_ms=round(percentile(timings[label], 0.95) * 1000, 1),
        )
    recall = exact.recall(found)
    stage("recall", recall_at_10=round(recall, 4))

    strong.close()
    rss = tree_rss(server_pid) if server_pid else psutil.Process().memory_info().rss
    stage("memory", rss_mib=round(rss / 2**20), disk_mib=round(disk / 2**20))
    if case.own_queries and not server_pid:  # after RSS: milvus-lite's own BM25 index is much bigger
        timings.update(own_paths(store, queries, query_texts, case.own_queries, [label for label, _, _ in runs]))
    store.close()

    t0 = time.perf_counter()
    if server_pid:
        probe = Milvus(uri=uri)
        probe.client.release_collection("scale")
        probe.close()
    reopened = Milvus(uri=uri)
    reopened.search_data("scale", queries[1].tolist(), top_k=TOP_K, mode="dense")
    reopen_seconds = time.perf_counter() - t0
    stage("reopen", seconds=round(reopen_seconds, 2))
    if server_pid:
        reopened.clear_db("scale")  # the next size starts from an empty server
    reopened.close()
    result = {
        "kind": kind,
        "n": n,
        "insert_per_s": (n - stored) / insert_seconds if n > stored else None,
        "insert_s": insert_seconds,
        "index": index,
        "index_s": index_seconds,
        "recall": recall,
        "rss_mib": rss / 2**20,
        "disk_mib": disk / 2**20,
        "reopen_s": reopen_seconds,
        "version": version,
    }
    for mode, values in timings.items():
        result[f"{mode}_p50_ms"] = percentile(values, 0.5) * 1000 if values else None
        result[f"{mode}_p95_ms"] = percentile(values, 0.95) * 1000 if values else None
    return result


def own_paths(store, queries, texts: list[str], count: int, modes: list[str]) -> dict[str, list[float]]:
    """The first `count` searches of each series again through milvus-lite's own search code
    (our speed-up uninstalled, deepsearcher/vector_db/_milvus_lite_speed.py): their latency beside
    ours, and whether every one returns the same rows with the same scores."""
    from deepsearcher.vector_db import _milvus_lite_speed as speed

    def run(mode: str) -> tuple[list[float], list[list[tuple]]]:
        seconds, answers = [], []
        for vector, text in zip(queries[:count].tolist(), texts[:count], strict=False):
            t0 = time.perf_counter()
            hits = store.search_data("scale", vector, top_k=TOP_K, query_text=text, mode=mode)
            seconds.append(time.perf_counter() - t0)
            answers.append([(hit.metadata.get("row"), round(hit.score, 6)) for hit in hits])
        return seconds, answers

    out: dict[str, list[float]] = {}
    for mode in modes:
        _, ours = run(mode)
        speed.uninstall()
        try:
            store.search_data("scale", queries[0].tolist(), top_k=TOP_K, query_text=texts[0], mode=mode)
            out[f"own_{mode}"], theirs = run(mode)
        finally:
            speed.install()
        same = sum(a == b for a, b in zip(ours, theirs, strict=True))
        stage(
            f"milvus-lite's own {mode} search",
            p50_ms=round(percentile(out[f"own_{mode}"], 0.5) * 1000, 1),
            p95_ms=round(percentile(out[f"own_{mode}"], 0.95) * 1000, 1),
            same_results=f"{same}/{count}",
        )
    return out


def child(args: argparse.Namespace) -> None:
    case = Case(
        args.kind, args.n, args.uri, args.data_dir, args.dim, args.server_pid, args.queries, args.index_type, args.own
    )
    result = measure(case)
    print("RESULT " + json.dumps(result), flush=True)


def _kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)


def run_child(case: Case, timeout: float) -> dict:
    kind, n = case.kind, case.n
    command = [
        sys.executable,
        __file__,
        "--child",
        "--kind",
        kind,
        "--n",
        str(n),
        "--dim",
        str(case.dim),
        "--uri",
        case.uri,
        "--data-dir",
        case.data_dir,
        "--queries",
        str(case.queries),
        "--index-type",
        case.index_type,
        "--own",
        str(case.own_queries),
    ]
    if case.server_pid:
        command += ["--server-pid", str(case.server_pid)]
    deadline = time.monotonic() + timeout
    last_stage = "start"
    # Own process group: a child killed at the deadline takes any Milvus Lite helper with it.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    killer = threading.Timer(timeout, _kill_group, (proc,))  # the child's stdout ends when it is killed
    killer.start()
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("STAGE "):
                last_stage = line[len("STAGE ") :].strip()
                print(f"  {kind} N={n}: {last_stage}", flush=True)
            elif line.startswith("RESULT "):
                return json.loads(line[len("RESULT ") :])
        proc.wait()
    finally:
        killer.cancel()
        if proc.poll() is None:
            _kill_group(proc)
    reader.join(timeout=5)
    if time.monotonic() >= deadline:
        return {"kind": kind, "n": n, "error": f"did not finish within {timeout:.0f}s; last stage: {last_stage}"}
    return {"kind": kind, "n": n, "error": "".join(errors).strip()[-600:] or f"exited with code {proc.returncode}"}


COLUMNS = [
    ("insert_per_s", "insert/s", "{:>10.0f}"),
    ("index", "index", "{:>10}"),
    ("index_s", "index s", "{:>10.1f}"),
    ("recall", "recall@10", "{:>10.3f}"),
    ("dense_p50_ms", "dense p50", "{:>10.1f}"),
    ("dense_p95_ms", "dense p95", "{:>10.1f}"),
    ("strong_p50_ms", "strong p50", "{:>10.1f}"),
    ("hybrid_p50_ms", "hybrid p50", "{:>10.1f}"),
    ("hybrid_p95_ms", "hybrid p95", "{:>10.1f}"),
    ("own_dense_p50_ms", "own dense", "{:>10.1f}"),
    ("own_hybrid_p50_ms", "own hybrid", "{:>10.1f}"),
    ("rss_mib", "RSS MiB", "{:>10.0f}"),
    ("disk_mib", "disk MiB", "{:>10.0f}"),
    ("reopen_s", "reopen s", "{:>10.2f}"),
]


def print_table(rows: list[dict]) -> None:
    print(f"{'store':<22}{'N':>9}" + "".join(f"{title:>11}" for _, title, _ in COLUMNS))
    for row in rows:
        if "error" in row:
            print(f"{row['kind']:<22}{row['n']:>9}  FAILED: {row['error']}")
            continue
        cells = "".join(
            " " + (fmt.format(row[key]) if row.get(key) is not None else f"{'-':>10}") for key, _, fmt in COLUMNS
        )
        print(f"{row['kind']:<22}{row['n']:>9}{cells}")
    print("\ngrowth per 10x of N (ratio of successive sizes)")
    by_kind: dict[str, list[dict]] = {}
    for row in rows:
        if "error" not in row:
            by_kind.setdefault(row["kind"], []).append(row)
    for kind, series in by_kind.items():
        for small, large in zip(series, series[1:], strict=False):
            cells = ""
            for key, _, _ in COLUMNS:
                a, b = small.get(key), large.get(key)
                numbers = isinstance(a, int | float) and isinstance(b, int | float)
                cells += f" {b / a:>9.2f}x" if numbers and a and b else f" {'-':>10}"
            print(f"{kind:<22}{small['n']:>4}->{large['n']:<7}"[:31].ljust(31) + cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lite", default="10000,100000,1000000", help="sizes for Milvus Lite ('' for none)")
    parser.add_argument("--flat", default="100000", help="sizes for Milvus Lite with index_type FLAT ('' for none)")
    parser.add_argument("--server", default="10000,100000", help="sizes for the Milvus 2.3.5 server ('' for none)")
    parser.add_argument("--keep-dir", help="keep the Lite databases here; a later run with it resumes (docstring)")
    parser.add_argument("--index-type", default="AUTO", help=argparse.SUPPRESS)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--timeout", type=float, default=3600, help="seconds allowed per store and size")
    parser.add_argument("--queries", type=int, default=QUERIES, help="searches timed per series")
    parser.add_argument(
        "--own", type=int, default=0, help="Lite: also time this many searches through milvus-lite's own search code"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--uri", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        child(args)
        return
    sizes = lambda text: [int(x) for x in text.split(",") if x.strip()]  # noqa: E731
    rows = []
    print(f"dim {args.dim}, {args.queries} queries, top {TOP_K}, {os.cpu_count()} CPUs", flush=True)
    lite_runs = [("milvus-lite", "AUTO", n) for n in sizes(args.lite)]
    lite_runs += [("milvus-lite-flat", "FLAT", n) for n in sizes(args.flat)]
    for kind, index_type, n in lite_runs:
        folder = os.path.join(args.keep_dir, f"{kind}-{n}") if args.keep_dir else tempfile.mkdtemp(prefix="scale-lite-")
        os.makedirs(folder, exist_ok=True)
        try:
            uri = os.path.join(folder, "milvus.db")
            case = Case(kind, n, uri, folder, args.dim, None, args.queries, index_type, args.own)
            rows.append(run_child(case, args.timeout))
        finally:
            if not args.keep_dir:
                shutil.rmtree(folder, ignore_errors=True)
        print(f"  done: {kind} N={n}", flush=True)
    if sizes(args.server):
        from deepsearcher.testing.milvus_servers import Milvus235Server

        with Milvus235Server() as server:
            for n in sizes(args.server):
                pid = server.process.pid
                case = Case("milvus-2.3.5-server", n, server.uri, str(server.data_dir), args.dim, pid, args.queries)
                rows.append(run_child(case, args.timeout))
                print(f"  done: milvus-2.3.5-server N={n}", flush=True)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
