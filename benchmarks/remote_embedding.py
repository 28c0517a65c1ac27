"""Ingestion through a remote embedding API: batches in flight vs. one batch at a time.

    python benchmarks/remote_embedding.py [--passages 2000] [--latency 0.2] [--batch-size 64]
                                          [--concurrency 1,2,4,8] [--venv /work/venvs/upstream]

A stand-in OpenAI-compatible embedding server on 127.0.0.1 answers every request after
`latency` seconds (a hosted API's round trip). The same generated corpus is loaded into a
fresh Milvus Lite store once per concurrency setting, in the same run: 1 is upstream's way
(the pipeline waits for each batch before sending the next), the others keep that many
batches in flight (`offline_loading.embed_scheduler`). Prints passages/s, requests, the
peak of requests in flight seen by the server, and the speed-up over sequential batches.
The "upstream" row is deepsearcher==0.0.2 in its own venv (`--venv`) on the same corpus and
the same stand-in: its `OpenAIEmbedding` and `load_from_local_files` with the same batch size
(see _upstream_remote.py); the last column is each row's speed-up over it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = (
    "river mountain engine archive signal harbour lantern orbit meadow circuit glacier ledger "
    "compass vessel quarry beacon canyon falcon tundra reactor mosaic cipher prairie summit"
).split()


def write_corpus(folder: Path, passages: int, per_file: int = 50, seed: int = 7) -> Path:
    """`passages` generated passages, `per_file` per JSONL file (one chunk each)."""
    import json

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, passages, per_file):
        rows = []
        for i in range(start, min(passages, start + per_file)):
            text = " ".join(rng.choice(WORDS) for _ in range(40))
            rows.append(json.dumps({"title": f"Passage {i}", "text": f"{text} (id {i})."}))
        (folder / f"part{start // per_file:05d}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


class StandInProcess:
    """The stand-in API in a child process (its JSON work must not share our GIL)."""

    def __init__(self, latency: float, dim: int) -> None:
        import subprocess

        command = [
            sys.executable,
            "-m",
            "deepsearcher.testing.embedding_server",
            "--latency",
            str(latency),
            "--dim",
            str(dim),
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.url = (self.process.stdout.readline() or "").strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.process.kill()
            raise SystemExit("the stand-in embedding server did not start")

    def stats(self, reset: bool = False) -> dict:
        import httpx

        return httpx.get(self.url.removesuffix("/v1") + "/stats" + ("?reset" if reset else "")).json()

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def run_once(corpus: Path, api: StandInProcess, concurrency: int, batch_size: int) -> dict:
    from deepsearcher.embedding.openai_embedding import OpenAIEmbedding
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.offline_loading.pipeline import IngestionPipeline
    from deepsearcher.offline_loading.sources import iter_file_sources
    from deepsearcher.vector_db.milvus import Milvus

    embedding = OpenAIEmbedding(model="stand-in", api_key="bench", base_url=api.url, max_concurrency=concurrency)
    _ = embedding.dimension  # the probe request, outside the timing
    before = api.stats(reset=True)
    with tempfile.TemporaryDirectory() as db_dir, Milvus(uri=os.path.join(db_dir, "milvus.db")) as store:
        pipeline = IngestionPipeline(embedding, store, batch_size=batch_size)
        started = time.perf_counter()
        summary = pipeline.run(iter_file_sources([corpus], FileLoader()), collection_name="bench")
        seconds = time.perf_counter() - started
        stored = sum(r.chunk_count for r in store.list_sources("bench").values())
    return {
        "concurrency": concurrency,
        "chunks": summary.chunks_inserted,
        "stored": stored,
        "seconds": seconds,
        "rate": summary.chunks_inserted / seconds,
        "requests": api.stats()["requests"] - before["requests"],
        "peak": api.stats()["peak_in_flight"],
    }


def run_upstream(venv: Path, corpus: Path, api: StandInProcess, batch_size: int, dim: int) -> dict | str:
    """Upstream's sequential batches in its own venv; the reason as a string when it cannot run."""
    python = venv / "bin" / "python"
    if not python.exists():
        return f"no python at {python} (a venv with deepsearcher==0.0.2)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # upstream's package, not ours
    script = Path(__file__).resolve().parent / "_upstream_remote.py"
    before = api.stats(reset=True)
    try:
        output = subprocess.run(
            [str(python), str(script), str(corpus), api.url, str(dim), str(batch_size)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
            timeout=1800,
        )
    except subprocess.TimeoutExpired:
        return "upstream did not finish within 30 minutes"
    if output.returncode != 0:
        return f"upstream failed: {output.stderr.strip().splitlines()[-1][-300:]}"
    row = json.loads(output.stdout.strip().splitlines()[-1])
    after = api.stats()
    return {
        "chunks": row["chunks"],
        "stored": row["chunks"],
        "seconds": row["seconds"],
        "rate": row["chunks"] / row["seconds"],
        "requests": after["requests"] - before["requests"],
        "peak": after["peak_in_flight"],
    }


def format_row(label: str, row: dict, base: float, upstream: float | None) -> str:
    versus = f"{row['rate'] / upstream:>10.2f}x" if upstream else f"{'-':>11}"
    return (
        f"{label:>9} {row['chunks']:>7} {row['stored']:>7} {row['seconds']:>8.2f} {row['rate']:>11.1f} "
        f"{row['requests']:>9} {row['peak']:>5} {row['rate'] / base:>8.2f}x {versus}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request at the stand-in server")
    parser.add_argument("--batch-size", type=int, default=64, help="chunks per embedding request")
    parser.add_argument("--concurrency", default="1,2,4,8", help="settings to compare; 1 = sequential (upstream)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--venv", type=Path, default=Path("/work/venvs/upstream"), help="venv with deepsearcher==0.0.2")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = [int(x) for x in args.concurrency.split(",")]
    api = StandInProcess(args.latency, args.dim)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "corpus", args.passages)
        print(
            f"{args.passages} generated passages, {args.batch_size} per request, stand-in API with "
            f"{args.latency * 1000:.0f} ms per request, Milvus Lite store"
        )
        print(
            f"{'in flight':>9} {'chunks':>7} {'stored':>7} {'seconds':>8} {'passages/s':>11} "
            f"{'requests':>9} {'peak':>5} {'speed-up':>9} {'vs upstream':>11}"
        )
        upstream = run_upstream(args.venv, corpus, api, args.batch_size, args.dim)
        upstream_rate = upstream["rate"] if isinstance(upstream, dict) else None
        base = None
        for concurrency in settings:
            row = run_once(corpus, api, concurrency, args.batch_size)
            base = base or row["rate"]
            label = f"{concurrency}" + (" (seq)" if concurrency == 1 else "")
            print(format_row(label, row, base, upstream_rate))
        if isinstance(upstream, dict):
            print(format_row("upstream", upstream, base or upstream["rate"], upstream_rate))
        else:
            print(f"{'upstream':>9} not run: {upstream}")
    api.close()


if __name__ == "__main__":
    main()
