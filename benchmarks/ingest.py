"""Ingestion benchmark: end-to-end passages/s vs. raw embedding throughput, peak RSS, re-ingest.

    python benchmarks/ingest.py [CORPUS_JSONL] [--subset 1000] [--batch-size 64]

Prints, for the same model on the same texts in the same run:
  - raw embedding throughput (the limit: nothing but model.encode over the chunk texts),
  - end-to-end ingestion throughput (load → split → embed → insert into Milvus Lite),
  - their ratio (target ≥ 0.90),
  - peak RSS of an ingestion of the first SUBSET passages and of the whole corpus, each in
    its own process, and their ratio (target ≤ 1.5),
  - a second ingestion of the unchanged corpus: its time as a share of the first
    (target ≤ 5 %) and the number of embeddings it computed (target 0).
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

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "2wiki_corpus" / "corpus.jsonl"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(db_dir: str):
    """Embedding + store + pipeline exactly as `deepsearcher load` builds them."""
    from deepsearcher.embedding.sentence_transformer_embedding import MiniLMEmbedding
    from deepsearcher.offline_loading.pipeline import IngestionPipeline
    from deepsearcher.vector_db.milvus import Milvus

    embedding = MiniLMEmbedding()
    store = Milvus(uri=os.path.join(db_dir, "milvus.db"))
    return embedding, store, IngestionPipeline


def ingest_worker(corpus: Path, batch_size: int, reingest: bool) -> dict:
    """Runs in a child process so its peak RSS belongs to this ingestion alone."""
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.offline_loading.sources import iter_file_sources

    with tempfile.TemporaryDirectory() as db_dir:
        embedding, store, Pipeline = build(db_dir)
        pipeline = Pipeline(embedding, store, batch_size=batch_size)
        first = pipeline.run(iter_file_sources([corpus], FileLoader()), collection_name="bench")
        report = {
            "chunks": first.chunks_inserted,
            "embeddings": first.embeddings_computed,
            "seconds": first.seconds,
            "failed": [f.reason for f in first.failed],
        }
        if reingest:
            second = pipeline.run(iter_file_sources([corpus], FileLoader()), collection_name="bench")
            report.update(reingest_seconds=second.seconds, reingest_embeddings=second.embeddings_computed, reingest_skipped=len(second.skipped_unchanged))
        store.close()
    report["peak_rss_mib"] = peak_rss_mib()
    return report


def run_child(corpus: Path, batch_size: int, reingest: bool) -> dict:
    command = [sys.executable, __file__, str(corpus), "--worker", "--batch-size", str(batch_size)]
    if reingest:
        command.append("--reingest")
    output = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if output.returncode != 0:
        sys.exit(f"The ingestion worker for {corpus} failed:\n{output.stderr[-3000:]}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def raw_embedding_throughput(corpus: Path, batch_size: int) -> tuple[int, float]:
    """Embed the very texts the pipeline embeds (chunk index_text), nothing else."""
    from deepsearcher.embedding.sentence_transformer_embedding import MiniLMEmbedding
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.loader.splitter import split_docs_to_chunks

    texts = [chunk.index_text for chunk in split_docs_to_chunks(FileLoader().load_file(str(corpus)))]
    embedding = MiniLMEmbedding()
    embedding.embed_documents(texts[:batch_size])  # warm-up, as the pipeline's first batch pays it too
    started = time.perf_counter()
    for start in range(0, len(texts), batch_size):
        embedding.embed_documents(texts[start : start + batch_size])
    return len(texts), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--subset", type=int, default=1000, help="passages in the small run for the RSS ratio")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reingest", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(ingest_worker(args.corpus, args.batch_size, args.reingest)))
        return
    if not args.corpus.exists():
        sys.exit(f"Corpus not found: {args.corpus} (give the path to a corpus.jsonl)")

    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "subset.jsonl"
        with args.corpus.open(encoding="utf-8") as source, subset.open("w", encoding="utf-8") as target:
            for index, line in enumerate(source):
                if index >= args.subset:
                    break
                target.write(line)
        small = run_child(subset, args.batch_size, reingest=False)
    full = run_child(args.corpus, args.batch_size, reingest=True)
    count, raw_seconds = raw_embedding_throughput(args.corpus, args.batch_size)

    raw_rate = count / raw_seconds
    e2e_rate = full["chunks"] / full["seconds"]
    print(f"corpus: {args.corpus} ({full['chunks']} chunks, batch size {args.batch_size}, {os.cpu_count()} CPUs)")
    print(f"raw embedding:        {count} texts in {raw_seconds:7.1f} s = {raw_rate:6.1f} passages/s")
    print(f"end-to-end ingestion: {full['chunks']} chunks in {full['seconds']:7.1f} s = {e2e_rate:6.1f} passages/s")
    print(f"ratio end-to-end / raw: {e2e_rate / raw_rate:.3f}   (target >= 0.90)")
    print(f"peak RSS: first {args.subset} passages {small['peak_rss_mib']:.0f} MiB, all {full['chunks']} {full['peak_rss_mib']:.0f} MiB, ratio {full['peak_rss_mib'] / small['peak_rss_mib']:.2f}   (target <= 1.5)")
    print(
        f"re-ingest unchanged corpus: {full['reingest_seconds']:.2f} s = {100 * full['reingest_seconds'] / full['seconds']:.1f} % of the first "
        f"(target <= 5 %), embeddings computed: {full['reingest_embeddings']} (target 0), sources skipped: {full['reingest_skipped']}"
    )
    if full["failed"]:
        print(f"failed inputs: {full['failed']}")


if __name__ == "__main__":
    main()
