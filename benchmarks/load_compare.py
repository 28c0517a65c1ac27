"""First load, unchanged re-load and store size of one corpus, this tree beside another checkout.

    python benchmarks/load_compare.py CORPUS [--base /tmp/base] [--rounds 2] [--per-file 30]

CORPUS is one of:
- a passages file or a folder holding `corpus.jsonl` (lines of {"title", "text"}, as
  /work/shared/data/2wiki_corpus): written as Markdown files of `--per-file` sections each
  ("## title" + text), the way a user would keep such notes;
- `real`: benchmarks/real_corpus.py's mixed folder (man pages, HTML, Markdown, text, PDF) built
  from this machine's own documentation with its default counts;
- any other folder: loaded as it is.

Each load is `deepsearcher load FOLDER --json` in its own process with PYTHONPATH set to the
tree it measures, into a fresh Milvus Lite database with the defaults (graph on). The trees
alternate (base, ours, base, ours, ...) so both see the same drift of this shared VM; the
ratio line compares the mean over rounds. Store size is the Milvus Lite folder on disk after
the load. Then this tree's unchanged re-load (median of three).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import format_table  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
DEEPSEARCHER = Path(sys.executable).with_name("deepsearcher")


def write_passages(corpus_file: Path, folder: Path, per_file: int) -> None:
    """A passages file as Markdown files of `per_file` "## title" sections each."""
    passages = [json.loads(line) for line in corpus_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(passages), per_file):
        group = passages[start : start + per_file]
        body = "\n\n".join(f"## {p['title']}\n\n{p['text']}" for p in group)
        (folder / f"part{start // per_file:04d}.md").write_text(
            f"# Part {start // per_file}\n\n{body}\n", encoding="utf-8"
        )


def prepare(corpus: str, work: Path, per_file: int) -> Path:
    if corpus == "real":
        import real_corpus

        folder = work / "corpus"
        counts = {"man": 150, "html": 60, "markdown": 40, "text": 30, "bare": 20}
        real_corpus.build_corpus(folder, counts)
        return folder
    path = Path(corpus)
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        path = path / "corpus.jsonl"
    if path.is_file():
        folder = work / "corpus"
        write_passages(path, folder, per_file)
        return folder
    return path


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def load(tree: Path, corpus: Path, store: Path) -> tuple[float, dict]:
    """(wall seconds, the --json summary) of `deepsearcher load` run on `tree`'s code."""
    store.mkdir(parents=True, exist_ok=True)
    config = store / "config.yaml"
    config.write_text(
        f"provide_settings:\n  vector_db:\n    provider: Milvus\n    config: {{uri: '{store / 'milvus.db'}'}}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    command = [str(DEEPSEARCHER), "load", str(corpus), "--collection", "docs", "--json", "-c", str(config)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=store, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"load on {tree} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    start = done.stdout.find("{")
    return wall, json.loads(done.stdout[start:]) if start >= 0 else {}


def token_counts(corpus: Path) -> dict[str, int]:
    """Tokens the bundled model reads from this tree's chunks of `corpus`: window-sized chunks
    (every token, what ours embeds) against 1,500-character chunks cut off at the window (what
    c7bb4a7 embedded, its chunk size; here with this tree's headings before the text)."""
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.loader.splitter import split_docs_to_chunks
    from deepsearcher.offline_loading.sources import iter_file_sources

    embedding = MiniLMEmbedding()
    embedding.embed_query("load the tokenizer")
    tokenizer = embedding.inner._tokenizer  # the ONNX encoder's own tokenizer (truncation set to the window)
    documents = [d for source in iter_file_sources([corpus], FileLoader()) for d in source.documents or []]
    encoded = tokenizer.encode_batch([d.page_content for d in documents])
    whole = sum(len(e.ids) + sum(len(o.ids) for o in e.overflowing) for e in encoded)
    print(f"documents: {len(documents)}, {whole:,} tokens unchunked (2 special tokens per 256)")
    rows, embedded = [], {}
    for name, label, size, cut, overlap in (
        ("base", "1,500-char chunks, cut at the window", 1500, True, 100),
        ("ours", "window-sized chunks", None, False, 100),
        ("overlap 50", "window-sized chunks, overlap 50", None, False, 50),
        ("overlap 0", "window-sized chunks, no overlap", None, False, 0),
    ):
        chunk_size = size or embedding.default_chunk_size()
        chunks = split_docs_to_chunks(documents, chunk_size=chunk_size, chunk_overlap=overlap)
        encodings = tokenizer.encode_batch([chunk.index_text for chunk in chunks])
        total = sum(len(e.ids) + sum(len(o.ids) for o in e.overflowing) for e in encodings)
        read = sum(len(e.ids) for e in encodings) if cut else total
        rows.append([label, len(chunks), total, read])
        embedded[name] = read
    print(format_table(["chunking", "chunks", "tokens in chunks", "tokens embedded"], rows))
    return embedded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", help="a corpus.jsonl (or its folder), 'real', or a folder of files")
    parser.add_argument("--base", type=Path, default=None, help="another checkout to load beside this one")
    parser.add_argument("--ours", type=Path, default=HERE, help="the checkout measured as ours (default: this one)")
    parser.add_argument("--rounds", type=int, default=2, help="loads per tree, alternating")
    parser.add_argument("--per-file", type=int, default=30, help="passages per Markdown file")
    parser.add_argument("--tokens", action="store_true", help="only count the tokens each chunking embeds")
    parser.add_argument(
        "--per-token", action="store_true", help="also count tokens embedded and compare speed per token (with --base)"
    )
    args = parser.parse_args()
    trees = ([("base", args.base)] if args.base else []) + [("ours", args.ours)]
    with tempfile.TemporaryDirectory(prefix="ds-load-compare-") as tmp:
        work = Path(tmp)
        corpus = prepare(args.corpus, work, args.per_file)
        text_bytes = folder_bytes(corpus)
        files = sum(1 for p in corpus.rglob("*") if p.is_file())
        print(f"corpus: {args.corpus} -> {files} files, {text_bytes / 1e6:.2f} MB")
        if args.tokens:
            token_counts(corpus)
            return
        rows, walls, sizes = [], {name: [] for name, _ in trees}, {name: [] for name, _ in trees}
        for round_index in range(args.rounds):
            for name, tree in trees:
                store = work / f"{name}{round_index}"
                wall, summary = load(tree, corpus, store)
                size = folder_bytes(store / "milvus.db")
                walls[name].append(wall)
                sizes[name].append(size)
                chunks = summary.get("chunks_inserted", 0)
                speed = f"{text_bytes / 1e3 / wall:.1f}"
                rows.append([name, round_index + 1, chunks, f"{wall:.1f}", speed, f"{size / 1e6:.2f}"])
        print(format_table(["tree", "round", "chunks", "seconds", "kB text/s", "store MB"], rows))
        if args.base:
            speed = statistics.mean(walls["base"]) / statistics.mean(walls["ours"])
            size = statistics.mean(sizes["ours"]) / statistics.mean(sizes["base"])
            print(f"ours vs base: speed {speed:.2f}x (mean wall), store {size:.2f}x")
            if args.per_token:  # ours embeds every token; base only each chunk's first window
                embedded = token_counts(corpus)
                per_token = speed * embedded["ours"] / embedded["base"]
                print(
                    f"tokens embedded ours/base {embedded['ours'] / embedded['base']:.2f}x; "
                    f"speed per token embedded {per_token:.2f}x"
                )
        for name, tree in trees:  # the last store of each tree, loaded again unchanged
            last = work / f"{name}{args.rounds - 1}"
            reloads = sorted(load(tree, corpus, last)[0] for _ in range(3))
            print(f"{name} unchanged re-load: median {reloads[1]:.2f} s ({', '.join(f'{w:.2f}' for w in reloads)})")


if __name__ == "__main__":
    main()
