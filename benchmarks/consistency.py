"""Which consistency level searches and reads-after-writes need on a real Milvus server.

    flock /tmp/heavy.lock python benchmarks/consistency.py [--trials 10] [--n 10000]

Starts a Milvus 2.3.5 standalone (`deepsearcher.testing.milvus_servers`) and, for each
level a search can ask for (Bounded, Session, Strong), through the store's own API:

- own write seen: in `--trials` fresh collections (created with the server's default level),
  200 rows inserted and at once a search for the last row's vector; how often it came first.
- delete seen: 100 rows, deleted by filter, then at once a count(*) query at that level;
  how often it said 0 (the store's own counts always ask for Strong).
- search latency: p50 / p95 of 100 dense searches (top 10) over `--n` rows, nothing written.

Then why collections are still created Strong: in a collection created at the server's
default level (Bounded) and in one created Strong, 200 rows inserted and at once
`list_sources` (a query_iterator that asks for Strong); how often it listed all 200.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LEVELS = ("Bounded", "Session", "Strong")
DIM = 64


def unit_vectors(rng, count: int):
    vectors = rng.standard_normal((count, DIM)).astype("float32")
    return (vectors / (vectors**2).sum(axis=1, keepdims=True) ** 0.5).tolist()


def chunks(rng, count: int, reference: str):
    from deepsearcher.types import Chunk

    return [Chunk(text=f"row {i}", reference=reference, embedding=v) for i, v in enumerate(unit_vectors(rng, count))]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def own_write_seen(store, rng, trials: int) -> int:
    seen = 0
    for trial in range(trials):
        name = f"own_write_{trial}"
        store.init_collection(DIM, name, embedding_model="random-unit", force_new_collection=True)
        rows = chunks(rng, 200, "r")
        store.insert_data(name, rows)
        hits = store.search_data(name, rows[-1].embedding, top_k=1, mode="dense")
        seen += bool(hits) and hits[0].text == rows[-1].text
        store.clear_db(name)
    return seen


def delete_seen(store, rng, level: str, trials: int) -> int:
    seen = 0
    name = "delete_seen"
    store.init_collection(DIM, name, embedding_model="random-unit", force_new_collection=True)
    for trial in range(trials):
        store.insert_data(name, chunks(rng, 100, f"gone{trial}"))
        store.count(name)  # Strong: the rows are there before the delete
        store.client.delete(name, filter=f'reference == "gone{trial}"')
        rows = store.client.query(name, filter="", output_fields=["count(*)"], consistency_level=level)
        seen += int(rows[0]["count(*)"]) == 0
    store.clear_db(name)
    return seen


def listing_complete(store, rng, level: str, trials: int) -> int:
    complete = 0
    for trial in range(trials):
        name = f"listing_{trial}"
        store.init_collection(
            DIM, name, embedding_model="random-unit", force_new_collection=True, consistency_level=level
        )
        store.insert_data(name, chunks(rng, 200, "r"))
        record = store.list_sources(name).get("r")
        complete += bool(record) and record.chunk_count == 200
        store.clear_db(name)
    return complete


def latency(store, rng, n: int) -> tuple[float, float]:
    timings = []
    for vector in unit_vectors(rng, 101):
        t0 = time.perf_counter()
        store.search_data("latency", vector, top_k=10, mode="dense")
        timings.append(time.perf_counter() - t0)
    timings = timings[1:]  # the first one loads the collection
    return percentile(timings, 0.5) * 1000, percentile(timings, 0.95) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--n", type=int, default=10000)
    args = parser.parse_args()

    import numpy as np

    from deepsearcher.testing.milvus_servers import Milvus235Server
    from deepsearcher.vector_db.milvus import Milvus

    rng = np.random.default_rng(5)
    with Milvus235Server() as server:
        setup = Milvus(uri=server.uri, hybrid=False)
        setup.init_collection(DIM, "latency", embedding_model="random-unit", force_new_collection=True)
        for start in range(0, args.n, 5000):
            setup.insert_data("latency", chunks(rng, min(5000, args.n - start), f"doc{start}"))
        setup.count("latency")
        print(f"Milvus 2.3.5 server, {args.trials} trials, {args.n} rows of {DIM} dims for latency", flush=True)
        print(f"{'search level':<14}{'own write seen':>16}{'delete seen':>13}{'p50 ms':>9}{'p95 ms':>9}")
        for level in LEVELS:
            with Milvus(uri=server.uri, hybrid=False, search_consistency=level) as store:
                own = own_write_seen(store, rng, args.trials)
                gone = delete_seen(store, rng, level, args.trials)
                p50, p95 = latency(store, rng, args.n)
            print(f"{level:<14}{own:>9}/{args.trials:<6}{gone:>6}/{args.trials:<6}{p50:>9.1f}{p95:>9.1f}", flush=True)
        setup.clear_db("latency")
        print("\nlist_sources (query_iterator asking for Strong) right after 200 inserted rows:")
        for level in ("Bounded", "Strong"):
            complete = listing_complete(setup, rng, level, args.trials)
            print(f"  collection created {level:<8} complete {complete}/{args.trials}", flush=True)
        setup.close()


if __name__ == "__main__":
    main()
