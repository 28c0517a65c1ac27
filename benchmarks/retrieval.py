"""Retrieval benchmark: dense vs BM25 vs hybrid on a multi-hop QA dataset, with Milvus Lite.

    python benchmarks/retrieval.py [DATASET_DIR ...] [--top-k 2,5] [--analyzer standard]
        [--rrf-k 10,60] [--candidates auto,50,100] [--weights 0.6:0.4,0.5:0.5] [--ppr ...] [--feedback 3:8:0.3]
        [--fetch 10] [--limit N] [--skip N] [--load-passages N]

DATASET_DIR holds corpus.jsonl ({title, text}, one passage each) and questions.jsonl
({question, gold_titles}); the default is ../shared/data/hotpotqa_train100 next to the
repository. Each passage becomes one chunk (title in metadata, so index_text = title +
text for both the embedding and BM25) in a fresh Milvus Lite collection in a temporary
directory. The corpus and the questions are embedded once; every fusion setting given
(comma-separated lists are swept) is then searched over the same collection, so a sweep
costs only searches. Without sweep options the hybrid row uses the Milvus store's
defaults. Recall@k is the share of a question's gold titles among the first
k distinct retrieved titles, averaged over questions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATASET, Dataset, format_table, load_dataset, mean, parse_int_list, recall_at_k  # noqa: E402

from deepsearcher.types import Chunk  # noqa: E402

#: SpreadSettings fields, in the order of a --ppr tuple.
WALK_FIELDS = ("link_weight", "hub_exponent", "hops", "seeds", "question_weight", "after_source")


@dataclass
class Setting:
    """One way of searching: mode plus, for hybrid, how the two lists are fused."""

    mode: str  # dense | sparse | hybrid
    ranker: str = "rrf"
    rrf_k: int = 60
    candidates: int | None = None  # None: the store's default, max(2 * limit, 20)
    weights: tuple[float, float] = (0.5, 0.5)
    default: bool = False
    #: Follow entity links from the top hits (deepsearcher/graph): (link weight, question weight), or None.
    links: tuple[float, float] | None = None
    #: Walk the graph by personalized PageRank instead (deepsearcher/graph/spread.py):
    #: (share passed on per step, hub exponent, hops, seeds, question weight, after source 1/0), or None.
    ppr: tuple[float, float, int, int, float, int] | None = None
    #: After the walk, the keyword search for the names its best chunks give (deepsearcher/graph/feedback.py):
    #: (seeds, names, weight), or None.
    feedback: tuple[int, int, float] | None = None

    @property
    def label(self) -> str:
        return f"{self.base_label} (default)" if self.default else self.base_label

    @property
    def base_label(self) -> str:
        if self.ppr is not None:
            decay, hub, hops, seeds, question, after = self.ppr
            walk = f"walk d={decay:g} hub={hub:g} hops={hops} seeds={seeds} q={question:g}"
            label = f"{self.search_label} + {walk}{'' if after else ' free'}"
            if self.feedback is not None:
                label += " + feedback s={} n={} w={:g}".format(*self.feedback)
            return label
        if self.links is not None:
            return f"{self.search_label} + links {self.links[0]:g}/{self.links[1]:g}"
        return self.search_label

    @property
    def search_label(self) -> str:
        if self.mode == "dense":
            return "dense"
        if self.mode == "sparse":
            return "BM25"
        candidates = self.candidates or "auto"
        if self.ranker == "weighted":
            return f"hybrid weighted {self.weights[0]:g}/{self.weights[1]:g} cand={candidates}"
        return f"hybrid rrf k={self.rrf_k} cand={candidates}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("datasets", nargs="*", default=[str(DEFAULT_DATASET)], help="dataset directories")
    parser.add_argument("--top-k", default="2,5", help="recall cut-offs, comma-separated (default 2,5)")
    parser.add_argument(
        "--analyzer",
        action="append",
        help="BM25 analyzer: standard, stop (standard + English stop words), stemmer, jieba, english "
        "(Milvus server only), or LABEL=JSON analyzer_params; repeat to compare (each gets its own "
        "collection; embeddings are reused)",
    )
    parser.add_argument("--rrf-k", default="", help="RRFRanker k values to sweep, comma-separated, e.g. 10,30,60")
    parser.add_argument(
        "--candidates",
        default="",
        help="candidates per side to sweep, comma-separated; 'auto' = max(2 x fetched, 20) "
        "(default: the store's default when sweeping)",
    )
    parser.add_argument(
        "--weights", default="", help="WeightedRanker dense:sparse weights to sweep, e.g. 0.7:0.3,0.5:0.5"
    )
    parser.add_argument(
        "--links",
        default="",
        help="entity-link weights to sweep, link:question pairs, e.g. 0.5:0.3,0.35:0 (default: the store's)",
    )
    parser.add_argument(
        "--ppr",
        default="",
        help="graph walks (truncated personalized PageRank) to sweep, share:hub:hops:seeds:question[:after] "
        "tuples, e.g. 0.5:1:2:3:0.3 (after: 1 keeps a reached chunk below its source, the default; 0 does not) "
        "(default: the store's SpreadSettings)",
    )
    parser.add_argument(
        "--feedback",
        default="",
        help="keyword feedback searches after the default walk to sweep, seeds:names:weight tuples, e.g. 3:8:0.3 "
        "(default: the store's FeedbackSettings)",
    )
    parser.add_argument("--fetch", type=int, default=0, help="chunks retrieved per question (default 2 x max top-k)")
    parser.add_argument("--limit", type=int, default=0, help="use only N questions (after --skip)")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N questions (a held-out half)")
    parser.add_argument(
        "--questions",
        default="",
        help="questions.jsonl to use instead of each dataset directory's own (e.g. "
        "benchmarks/data/2wiki_heldout.jsonl over ../shared/data/2wiki_corpus)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=256, help="chunks handed to the model per call (a length-sorted window)"
    )
    parser.add_argument(
        "--backend", default="auto", choices=("auto", "onnx", "torch"), help="MiniLM runtime (default: auto)"
    )
    parser.add_argument(
        "--embedding",
        action="append",
        choices=("MiniLMEmbedding", "MultilingualE5Embedding"),
        help="bundled model(s) to compare, one table each (default: MiniLMEmbedding); repeat to compare",
    )
    parser.add_argument(
        "--cache", default="", help="directory to keep corpus/question embeddings in between runs (default: none)"
    )
    parser.add_argument(
        "--load-passages",
        type=int,
        default=0,
        help="also load the first N passages of the first dataset's corpus as Markdown files (30 a file) with "
        "the entity graph off and on (and the graph rebuilt afterwards), and print load speed and store size "
        "(default: skip)",
    )
    parser.add_argument("--json", dest="json_out", default="", help="also write the results to this JSON file")
    return parser.parse_args(argv)


# A few English stop words for the "stop" preset (Milvus Lite honours an explicit
# stop_words list; it ignores stemmer filters and rejects the built-in "english" analyzer).
STOP_WORDS = (
    "a an and are as at be been but by did do does for from had has have how if in into is it its no not "
    "of on or such that the their then there these they this to was were what when where which who whom "
    "why will with"
).split()
ANALYZER_PRESETS: dict[str, str | dict[str, Any]] = {
    "standard": "standard",
    "stop": {"tokenizer": "standard", "filter": [{"type": "stop", "stop_words": STOP_WORDS}]},
    "stemmer": {"tokenizer": "standard", "filter": ["lowercase", {"type": "stemmer", "language": "english"}]},
}


def parse_analyzer(text: str) -> tuple[str, str | dict[str, Any]]:
    """(label, analyzer): a preset name, LABEL=JSON, a JSON dict, or a Milvus analyzer name."""
    text = text.strip()
    if text in ANALYZER_PRESETS:
        return text, ANALYZER_PRESETS[text]
    label, sep, spec = text.partition("=")
    if sep and spec.strip().startswith("{"):
        return label, json.loads(spec)
    if text.startswith("{"):
        return "custom", json.loads(text)
    return text, text


def store_defaults() -> Setting:
    """The setting a Milvus store uses when not told otherwise (hybrid, with entity links when on)."""
    import inspect

    from deepsearcher.graph import LinkSettings, SpreadSettings
    from deepsearcher.graph.feedback import FeedbackSettings
    from deepsearcher.vector_db.milvus import Milvus

    params = inspect.signature(Milvus.__init__).parameters
    links, walk, feedback = LinkSettings(), SpreadSettings(), FeedbackSettings()
    graph, ppr = params["graph"].default, params["graph_walk"].default == "ppr"
    return Setting(
        "hybrid",
        ranker=params["ranker"].default,
        rrf_k=params["rrf_k"].default,
        candidates=params["candidates_per_side"].default,
        weights=tuple(params["weights"].default),
        default=True,
        links=(links.link_weight, links.question_weight) if graph and not ppr else None,
        ppr=(walk.link_weight, walk.hub_exponent, walk.hops, walk.seeds, walk.question_weight, int(walk.after_source))
        if graph and ppr
        else None,
        feedback=(feedback.seeds, feedback.names, feedback.weight)
        if graph and params["graph_feedback"].default
        else None,
    )


def build_settings(args: argparse.Namespace) -> list[Setting]:
    from dataclasses import replace

    from deepsearcher.graph import LinkSettings

    default = store_defaults()
    link_pair = default.links or (LinkSettings().link_weight, LinkSettings().question_weight)
    bare = replace(default, links=None, ppr=None, feedback=None, default=False)
    settings = [Setting("dense"), Setting("sparse"), bare]
    settings.append(replace(bare, links=link_pair, default=default.ppr is None))
    settings.append(replace(Setting("dense"), links=link_pair))
    walks = [tuple(float(x) for x in spec.split(":")) for spec in args.ppr.split(",") if spec.strip()]
    if not walks:
        from deepsearcher.graph import SpreadSettings

        walk = SpreadSettings()
        walks = [(walk.link_weight, walk.hub_exponent, walk.hops, walk.seeds, walk.question_weight, walk.after_source)]
    for decay, hub, hops, seeds, question, *after in walks:
        ppr = (decay, hub, int(hops), int(seeds), question, int(after[0]) if after else 1)
        settings.append(replace(bare, ppr=ppr, default=default.ppr == ppr and default.feedback is None))
    feedbacks = [tuple(float(x) for x in spec.split(":")) for spec in args.feedback.split(",") if spec.strip()]
    for seeds, names, weight in feedbacks or ([default.feedback] if default.feedback else []):
        feedback = (int(seeds), int(names), weight)
        settings.append(replace(default, links=None, feedback=feedback, default=default.feedback == feedback))
    for pair in filter(None, (w.strip() for w in args.links.split(","))):
        link_w, question_w = (float(x) for x in pair.split(":"))
        settings.append(replace(bare, links=(link_w, question_w)))
    candidates: list[int | None] = [
        None if c.strip() == "auto" else int(c) for c in args.candidates.split(",") if c.strip()
    ]
    if not candidates and (args.rrf_k or args.weights):
        candidates = [default.candidates]
    for cand in candidates:
        for k in parse_int_list(args.rrf_k) or ([] if args.weights else [default.rrf_k]):
            settings.append(Setting("hybrid", ranker="rrf", rrf_k=k, candidates=cand))
        for pair in filter(None, (w.strip() for w in args.weights.split(","))):
            dense_w, sparse_w = (float(x) for x in pair.split(":"))
            settings.append(Setting("hybrid", ranker="weighted", candidates=cand, weights=(dense_w, sparse_w)))
    return settings


def embed_all(dataset: Dataset, chunks: list[Chunk], embedding: Any, args: argparse.Namespace) -> list[list[float]]:
    """Fill chunk embeddings and return question vectors, reusing a --cache file of the corpus
    when it was made from the same texts with the same model (questions are embedded each run:
    they are few, and a new question set then costs no corpus re-embedding)."""
    import hashlib

    import numpy as np

    texts = [c.index_text for c in chunks]
    model_key = f"{embedding.model_name}|{getattr(embedding, 'backend', '')}"
    digest = hashlib.sha256("\x00".join([model_key, *texts]).encode("utf-8")).hexdigest()[:16]
    cache = Path(args.cache) / f"corpus-{digest}.npy" if args.cache else None
    if cache is not None and cache.is_file():
        for chunk, vector in zip(chunks, np.load(cache).tolist(), strict=True):
            chunk.embedding = vector
    else:
        embedding.embed_chunks(chunks, batch_size=args.batch_size, show_progress=False)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.save(cache, np.asarray([c.embedding for c in chunks], dtype=np.float32))
    return [embedding.embed_query(q.question) for q in dataset.questions]


def run_dataset(dataset: Dataset, args: argparse.Namespace, embedding: Any) -> list[dict[str, Any]]:
    from deepsearcher.graph import LinkSettings, SpreadSettings
    from deepsearcher.graph.feedback import FeedbackSettings
    from deepsearcher.vector_db.milvus import Milvus

    ks = parse_int_list(args.top_k)
    fetch = args.fetch or 2 * max(ks)
    analyzers = [parse_analyzer(a) for a in (args.analyzer or ["standard"])]

    started = time.perf_counter()
    chunks = [Chunk(text=p["text"], reference=p["title"], metadata={"title": p["title"]}) for p in dataset.passages]
    query_vectors = embed_all(dataset, chunks, embedding, args)
    embed_s = time.perf_counter() - started
    print(
        f"\n{dataset.name}: {len(chunks)} passages, {len(dataset.questions)} questions; "
        f"embedded in {embed_s:.1f} s with {embedding.model_name}",
        flush=True,
    )

    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ds-bench-") as tmp:
        store = Milvus(uri=os.path.join(tmp, "bench.db"))
        try:
            for index, (analyzer_label, analyzer) in enumerate(analyzers):
                collection = f"bench_{index}"
                store.analyzer = analyzer
                store.init_collection(
                    embedding.dimension, collection, description=dataset.name, embedding_model=embedding.model_name
                )
                started = time.perf_counter()
                store.insert_data(collection, chunks)
                insert_s = time.perf_counter() - started
                print(f"  analyzer {analyzer_label}: inserted and indexed in {insert_s:.1f} s", flush=True)
                for setting in build_settings(args):
                    if setting.mode == "dense" and index > 0:
                        continue  # the analyzer does not change dense results
                    store.ranker, store.rrf_k, store.weights = setting.ranker, setting.rrf_k, setting.weights
                    store.candidates_per_side = setting.candidates
                    store.graph_walk = "links"
                    if setting.links is not None:
                        store.link_settings = LinkSettings(
                            link_weight=setting.links[0], question_weight=setting.links[1]
                        )
                    if setting.ppr is not None:
                        store.graph_walk = "ppr"
                        store.spread_settings = SpreadSettings(**dict(zip(WALK_FIELDS, setting.ppr, strict=True)))
                    store.graph_feedback = setting.feedback is not None
                    if setting.feedback is not None:
                        seeds, names, weight = setting.feedback
                        store.feedback_settings = FeedbackSettings(seeds=seeds, names=names, weight=weight)
                    recalls: dict[int, list[float]] = {k: [] for k in ks}
                    empty = 0
                    started = time.perf_counter()
                    for question, vector in zip(dataset.questions, query_vectors, strict=False):
                        hits = store.search_data(
                            collection,
                            vector,
                            top_k=fetch,
                            query_text=question.question,
                            mode=setting.mode,
                            links=setting.links is not None or setting.ppr is not None,
                        )
                        titles = [hit.metadata.get("title") for hit in hits]
                        empty += not hits
                        for k in ks:
                            recalls[k].append(recall_at_k(titles, question.gold_titles, k))
                    elapsed = time.perf_counter() - started
                    row = {
                        "dataset": dataset.name,
                        "analyzer": "-" if setting.mode == "dense" else analyzer_label,
                        "setting": setting.label,
                        "mode": setting.mode,
                        "ranker": setting.ranker,
                        "rrf_k": setting.rrf_k,
                        "candidates": setting.candidates,
                        "weights": list(setting.weights),
                        "links": list(setting.links) if setting.links else None,
                        "ppr": list(setting.ppr) if setting.ppr else None,
                        "feedback": list(setting.feedback) if setting.feedback else None,
                        "ms_per_query": 1000 * elapsed / max(1, len(dataset.questions)),
                        "no_hits": empty,
                        **{f"recall@{k}": mean(recalls[k]) for k in ks},
                    }
                    results.append(row)
        finally:
            store.close()
    return results


def print_table(dataset_name: str, rows: list[dict[str, Any]], ks: list[int], fetch: int) -> None:
    headers = ["method", "analyzer", *(f"R@{k}" for k in ks), "ms/query", "no hits"]
    table = [
        [r["setting"], r["analyzer"], *(r[f"recall@{k}"] for k in ks), f"{r['ms_per_query']:.1f}", r["no_hits"]]
        for r in rows
    ]
    print(f"\n{dataset_name} — title Recall@k over the first k distinct titles ({fetch} chunks fetched per question)")
    print(format_table(headers, table))
    last = max(ks)
    best_single = max(
        (r for r in rows if r["mode"] != "hybrid" and not r["links"] and not r["ppr"]),
        key=lambda r: r[f"recall@{last}"],
    )
    best_hybrid = max((r for r in rows if r["mode"] == "hybrid"), key=lambda r: r[f"recall@{last}"], default=None)
    if best_hybrid:
        print(
            f"best single: {best_single['setting']} R@{last}={best_single[f'recall@{last}']:.3f}; "
            f"best hybrid: {best_hybrid['setting']} R@{last}={best_hybrid[f'recall@{last}']:.3f}"
        )


def write_markdown_corpus(dataset: Dataset, count: int, folder: Path, per_file: int = 30) -> int:
    """The first `count` passages as Markdown files of `per_file` sections each; returns bytes written."""
    folder.mkdir(parents=True, exist_ok=True)
    passages = dataset.passages[:count]
    written = 0
    for start in range(0, len(passages), per_file):
        group = passages[start : start + per_file]
        text = "\n\n".join(f"## {p['title']}\n\n{p['text']}" for p in group)
        path = folder / f"part{start // per_file:04d}.md"
        written += path.write_text(f"# Part {start // per_file}\n\n{text}\n", encoding="utf-8")
    return written


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def load_figures(dataset: Dataset, count: int, embedding: Any) -> list[list[Any]]:
    """Load speed and store size of the same Markdown folder: graph off (then rebuilt), graph on, and
    graph off again (the first load in a process pays one-off costs too); each into a fresh Milvus Lite database."""
    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.offline_loading.pipeline import IngestionPipeline
    from deepsearcher.offline_loading.sources import iter_file_sources
    from deepsearcher.vector_db.milvus import Milvus

    rows = []
    with tempfile.TemporaryDirectory(prefix="ds-bench-load-") as tmp:
        corpus = Path(tmp) / "corpus"
        size = write_markdown_corpus(dataset, count, corpus)
        print(
            f"\nload: {count} passages of {dataset.name} in {len(list(corpus.iterdir()))} Markdown files, "
            f"{size / 1e6:.2f} MB"
        )
        embedding.embed_query("warm up")  # the model's and Milvus Lite's one-time start are no load's cost
        (Path(tmp) / "warm").mkdir()
        (Path(tmp) / "warm" / "warm.md").write_text("# Warm up\n\nImports and first calls.\n", encoding="utf-8")
        with Milvus(uri=str(Path(tmp) / "warm.db")) as warm:
            IngestionPipeline(embedding, warm).run(iter_file_sources([Path(tmp) / "warm"], FileLoader()), "warm")
        configs = [
            ("graph off", False),
            ("graph on", True),
            ("graph off, again (drift)", False),  # the first run in a process pays one-off costs too
        ]
        for index, (label, graph) in enumerate(configs):
            db = Path(tmp) / f"store{index}.db"
            store = Milvus(uri=str(db), graph=graph)
            started = time.perf_counter()
            summary = IngestionPipeline(embedding, store).run(
                iter_file_sources([corpus], FileLoader()), collection_name="load"
            )
            seconds = time.perf_counter() - started
            chunks = store.count("load")
            rows.append(
                [
                    label,
                    summary.ok,
                    chunks,
                    f"{seconds:.1f}",
                    f"{chunks / seconds:.1f}",
                    f"{size / 1e3 / seconds:.1f}",
                    f"{folder_bytes(db) / 1e6:.2f}",
                ]
            )
            if index == 0:  # the graph added afterwards: `deepsearcher graph rebuild`, no re-embedding
                started = time.perf_counter()
                rebuilt = store.rebuild_graph("load") or 0
                seconds = time.perf_counter() - started
                row = ["  then graph rebuild", True, rebuilt, f"{seconds:.1f}", f"{rebuilt / seconds:.1f}", "-"]
                rows.append([*row, f"{folder_bytes(db) / 1e6:.2f}"])
            store.close()
    print(format_table(["load", "ok", "chunks", "seconds", "chunks/s", "kB text/s", "store MB"], rows))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from deepsearcher.embedding.e5_embedding import MultilingualE5Embedding
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    ks = parse_int_list(args.top_k)
    fetch = args.fetch or 2 * max(ks)
    all_rows: list[dict[str, Any]] = []
    for provider in args.embedding or ["MiniLMEmbedding"]:
        embedding = (
            MiniLMEmbedding(backend=args.backend) if provider == "MiniLMEmbedding" else MultilingualE5Embedding()
        )
        print(f"\nembedding: {embedding.model_name} on {getattr(embedding, 'backend', 'onnx')}")
        for directory in args.datasets:
            dataset = load_dataset(
                directory, limit=args.limit or None, questions_file=args.questions or None, skip=args.skip
            )
            rows = run_dataset(dataset, args, embedding)
            print_table(f"{dataset.name} · {embedding.model_name}", rows, ks, fetch)
            all_rows.extend({**row, "embedding": embedding.model_name} for row in rows)
    if args.load_passages:
        embedding = MiniLMEmbedding(backend=args.backend)
        load_figures(
            load_dataset(args.datasets[0], questions_file=args.questions or None), args.load_passages, embedding
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(all_rows, indent=2), encoding="utf-8")
        print(f"\nwrote {args.json_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
