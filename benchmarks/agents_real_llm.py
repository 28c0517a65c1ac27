"""Naive RAG vs DeepSearch vs ChainOfRAG with a real local model (LlamaCpp, in-process) on the
multi-hop sets: Recall@2/@5 of the gold titles, exact match / F1 of the answer, tokens, wall time,
LLM calls, and parse repairs / unrecovered parse failures per prompt kind.

    nice -n 10 python benchmarks/agents_real_llm.py --limit 5            # both sets, the 0.5B
    python benchmarks/agents_real_llm.py --model qwen2.5-coder-1.5b-instruct --data ../shared/data/musique_train100

Rows go to OUT/results.jsonl as they finish; a second run skips the rows already there (resumable).
Needs the `llamacpp` extra and the model (`make local-llm`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from deepsearcher.agent import ChainOfRAG, DeepSearch, NaiveRAG  # noqa: E402
from deepsearcher.app.components import build_components  # noqa: E402
from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.evaluation.dataset import collection_name_for, load_dataset  # noqa: E402
from deepsearcher.evaluation.runner import load_corpus  # noqa: E402
from deepsearcher.evaluation.scoring import distinct_titles, exact_match, recall_at_k, token_f1  # noqa: E402
from deepsearcher.llm.errors import LLMOutputError  # noqa: E402
from deepsearcher.testing.llm_call_log import CallLog  # noqa: E402

#: ../shared/data beside the checkout (a worktree sits one level deeper: the nearest ancestor's)
DATA = next(
    (up / "shared" / "data" for up in HERE.parents if (up / "shared" / "data").is_dir()),
    HERE.parent.parent / "shared" / "data",
)
AGENTS = {"naive": NaiveRAG, "deep": DeepSearch, "chain": ChainOfRAG}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", type=Path, default=[DATA / "hotpotqa_train100", DATA / "musique_train100"])
    parser.add_argument("--model", nargs="+", default=["qwen2.5-coder-0.5b-instruct"])
    parser.add_argument("--agents", default="naive,deep,chain")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--max-iter", type=int, default=1)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=900.0, help="each query's deadline, seconds")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "agents_real_llm")
    return parser.parse_args(argv)


def build(out: Path, model: str, args: argparse.Namespace) -> Any:
    config = out / "config.yaml"
    llm = {"model": model, "n_ctx": args.n_ctx, "max_tokens": 256}
    if args.threads:
        llm["n_threads"] = args.threads
    config.write_text(
        json.dumps(
            {
                "provide_settings": {
                    "llm": {"provider": "LlamaCpp", "config": llm},
                    "vector_db": {"provider": "Milvus", "config": {"uri": str(out / "milvus.db")}},
                }
            }
        ),
        encoding="utf-8",
    )
    return build_components(Configuration(str(config)))


def run_one(agent: Any, log: CallLog, question: Any, collection: str, args: argparse.Namespace) -> dict[str, Any]:
    log.reset()
    started = time.perf_counter()
    row: dict[str, Any] = {"error": None}
    try:
        result = agent.query_result(question.question, collections=[collection], timeout=args.timeout)
    except LLMOutputError as exc:  # unrecovered: the one repair retry did not help
        row.update(error=f"unparsed {exc.step}", unrecovered={exc.step: 1})
        result = None
    except Exception as exc:  # noqa: BLE001 - one failed question is a row, not the end of the run
        row["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        result = None
    row["wall_s"] = round(time.perf_counter() - started, 2)
    row["calls"] = dict(log.calls)
    row["repairs"] = dict(log.repairs)
    if result is None:
        return row
    titles = distinct_titles([r.title or r.reference for r in result.retrieved_results])
    judged = [step.data for step in result.steps if step.kind == "judge"]
    unparsed = sum(data.get("unparseable", 0) for data in judged)
    row.update(
        recall_2=recall_at_k(titles, question.gold_titles, 2),
        recall_5=recall_at_k(titles, question.gold_titles, 5),
        em=exact_match(result.answer, question.answers),
        f1=token_f1(result.answer, question.answers),
        tokens=result.total_tokens,
        answer=result.answer[:300],
        fallback=any(step.kind == "fallback" for step in result.steps),
        queries=[step.data["query"] for step in result.steps if step.kind == "search"],
        judged=sum(data.get("judged", 0) for data in judged),
        kept=sum(data.get("accepted", 0) for data in judged),
        titles=titles,  # all, in order: what the answer read, and enough to re-rank them offline
        unrecovered={"judge_chunk": unparsed} if unparsed else {},
    )
    return row


def mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "–"


def table(rows: list[dict[str, Any]]) -> str:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["dataset"], row["model"], row["agent"])].append(row)
    head = (
        "| set | model | agent | n | R@2 | R@5 | EM | F1 | tokens | wall s | calls | fallback | kept/judged "
        "| repairs | unrecovered | errors |"
    )
    lines = [head, "|" + "---|" * 16]
    for (dataset, model, agent), group in sorted(groups.items()):
        ok = [row for row in group if "recall_5" in row]
        repairs: Counter[str] = Counter()
        unrecovered: Counter[str] = Counter()
        for row in group:
            repairs.update(row.get("repairs") or {})
            unrecovered.update(row.get("unrecovered") or {})
        judged = [row for row in ok if "judged" in row]  # rows of runs before this column: none
        kept = f"{sum(r['kept'] for r in judged)}/{sum(r['judged'] for r in judged)}" if judged else "–"
        lines.append(
            f"| {dataset} | {model.split('-instruct')[0]} | {agent} | {len(group)} "
            f"| {mean([r['recall_2'] for r in ok])} | {mean([r['recall_5'] for r in ok])} "
            f"| {mean([r['em'] for r in ok])} | {mean([r['f1'] for r in ok])} "
            f"| {mean([r['tokens'] for r in ok])[:-2]} | {mean([r['wall_s'] for r in group])[:-2]} "
            f"| {mean([sum(r['calls'].values()) for r in group])[:-2]} "
            f"| {sum(bool(r.get('fallback')) for r in ok)} | {kept} "
            f"| {dict(repairs) or 0} | {dict(unrecovered) or 0} | {sum(1 for r in group if r['error'])} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    done = {(r["dataset"], r["model"], r["agent"], r["id"]) for r in rows}
    agents = [name.strip() for name in args.agents.split(",") if name.strip()]
    for model in args.model:
        components = build(args.out, model, args)
        log = CallLog()
        llm = log.attach(components.llm)
        for data_dir in args.data:
            dataset = load_dataset(data_dir)
            collection = collection_name_for(dataset)
            load_corpus(components, dataset, collection)
            for question in dataset.questions[: args.limit]:
                for name in agents:
                    key = (dataset.name, model, name, question.id)
                    if key in done:
                        continue
                    options: dict[str, Any] = {"top_k": args.top_k}
                    if name != "naive":
                        options["max_iter"] = args.max_iter
                    agent = AGENTS[name](llm, components.embedding_model, components.vector_db, **options)
                    row = {"dataset": dataset.name, "model": model, "agent": name, "id": question.id}
                    row.update(run_one(agent, log, question, collection, args))
                    rows.append(row)
                    with results.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(row) + "\n")
                    print(
                        f"{dataset.name} {name} {question.id}: R@5 {row.get('recall_5', '–')} "
                        f"F1 {row.get('f1', '–')} {row['wall_s']} s {row['error'] or ''}",
                        flush=True,
                    )
        components.vector_db.close()
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
