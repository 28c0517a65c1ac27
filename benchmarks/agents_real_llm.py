"""Naive RAG vs DeepSearch vs ChainOfRAG with a real local model (LlamaCpp, in-process) on the
multi-hop sets: answer accuracy (normalised gold contained in the short answer; for "A or B"
questions the other candidate absent), EM / F1 of the short answer, abstention on a generated
unanswerable split (the sets' own questions about a made-up entity), citation precision (cited
sources holding the gold answer; over all answers, and over right answers only, where it says
whether the citations point at the page that holds the answer), citation support (cited sources
holding the short answer given, right or wrong), answers stating a fact without a
citation, Recall@2/@5 of the gold titles, tokens, wall time, LLM calls, and parse repairs /
unrecovered parse failures; then a per-question table.

    nice -n 10 python benchmarks/agents_real_llm.py --limit 5            # both sets, the 0.5B
    python benchmarks/agents_real_llm.py --model qwen2.5-coder-1.5b-instruct --limit 6 --unanswerable 3
    python benchmarks/agents_real_llm.py --offset 50 --limit 5 ...     # a DEV slice, never the report set
    python benchmarks/agents_real_llm.py --report-only --out /tmp/agents_real_llm   # the tables of a run

Rows go to OUT/results.jsonl as they finish; a second run skips the rows already there (resumable).
Needs the `llamacpp` extra and the model (`make local-llm`).
"""

from __future__ import annotations

import argparse
import itertools
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
from deepsearcher.evaluation.scoring import (  # noqa: E402
    answer_correct,
    citation_precision,
    citation_support,
    distinct_titles,
    exact_match,
    is_abstention,
    recall_at_k,
    token_f1,
)
from deepsearcher.evaluation.unanswerable import UNANSWERABLE_PREFIX, unanswerable_questions  # noqa: E402
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
    parser.add_argument(
        "--offset", type=int, default=0, help="skip the first N questions of each set (a DEV slice: --offset 50)"
    )
    parser.add_argument(
        "--only", nargs="+", default=None, help="of the questions selected, only these ids (re-running rows)"
    )
    parser.add_argument("--max-iter", type=int, default=1)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=900.0, help="each query's deadline, seconds")
    parser.add_argument("--unanswerable", type=int, default=0, help="generated unanswerable questions per set")
    parser.add_argument("--report-only", action="store_true", help="print the tables of OUT/results.jsonl")
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
    unanswerable = question.id.startswith(UNANSWERABLE_PREFIX)
    cited = [source.text for source in result.sources if source.cited]
    row.update(
        unanswerable=unanswerable,
        abstained=is_abstention(result.short_answer),
        short=result.short_answer,
        gold=question.answer,
        question=question.question,
        correct=None if unanswerable else answer_correct(result.short_answer, question.answers, question.question),
        cite_precision=None if unanswerable else citation_precision(cited, question.answers),
        cite_support=citation_support(cited, result.short_answer),
        cited_titles=[source.title or source.reference for source in result.sources if source.cited],
        uncited=not result.abstained and not cited,
        recall_2=None if unanswerable else recall_at_k(titles, question.gold_titles, 2),
        recall_5=None if unanswerable else recall_at_k(titles, question.gold_titles, 5),
        em=None if unanswerable else exact_match(result.short_answer, question.answers),
        f1=None if unanswerable else token_f1(result.short_answer, question.answers),
        tokens=result.total_tokens,
        answer=result.answer[:300],
        written=next((str(s.data.get("written", ""))[:300] for s in result.steps if s.kind == "abstained"), None),
        extracted=next((s.data.get("extracted") for s in result.steps if s.kind == "answer"), None),
        fallback=any(step.kind == "fallback" for step in result.steps),
        queries=[step.data["query"] for step in result.steps if step.kind == "search"],
        hops=[  # DeepSearch's bridge chain: each hop asked, its answer, whether it was used
            [step.data["query"], step.data["answer"], step.data.get("used", True)]
            for step in result.steps
            if step.kind == "intermediate_answer"
        ],
        judged=sum(data.get("judged", 0) for data in judged),
        kept=sum(data.get("accepted", 0) for data in judged),
        titles=titles,  # all, in order: what the answer read, and enough to re-rank them offline
        unrecovered={"judge_chunk": unparsed} if unparsed else {},
    )
    return row


def mean(values: list[Any]) -> str:
    present = [float(value) for value in values if value is not None]
    return f"{sum(present) / len(present):.3f}" if present else "–"


def table(rows: list[dict[str, Any]]) -> str:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["dataset"], row["model"], row["agent"])].append(row)
    head = (
        "| set | model | agent | n | accuracy | abstention (unanswerable) | wrongly abstained | cite precision "
        "| cite precision (right answers) | cite support | uncited facts | EM | F1 | R@2 | R@5 | tokens | wall s "
        "| calls | fallback | kept/judged | repairs | unrecovered | errors |"
    )
    lines = [head, "|" + "---|" * 23]
    for (dataset, model, agent), group in sorted(groups.items()):
        ok = [row for row in group if "tokens" in row]
        answerable = [row for row in ok if not row.get("unanswerable")]
        unanswerable = [row for row in ok if row.get("unanswerable")]
        repairs: Counter[str] = Counter()
        unrecovered: Counter[str] = Counter()
        for row in group:
            repairs.update(row.get("repairs") or {})
            unrecovered.update(row.get("unrecovered") or {})
        judged = [row for row in ok if "judged" in row]
        kept = f"{sum(r['kept'] for r in judged)}/{sum(r['judged'] for r in judged)}" if judged else "–"
        lines.append(
            f"| {dataset} | {model.split('-instruct')[0]} | {agent} | {len(answerable)}+{len(unanswerable)} "
            f"| {mean([r.get('correct') for r in answerable])} "
            f"| {mean([float(r['abstained']) for r in unanswerable])} "
            f"| {mean([float(r.get('abstained', False)) for r in answerable])} "
            f"| {mean([r.get('cite_precision') for r in answerable])} "
            f"| {mean([r.get('cite_precision') for r in answerable if r.get('correct')])} "
            f"| {mean([r.get('cite_support') for r in answerable])} "
            f"| {sum(1 for r in ok if r.get('uncited') and not r.get('abstained'))} "
            f"| {mean([r['em'] for r in answerable])} | {mean([r['f1'] for r in answerable])} "
            f"| {mean([r['recall_2'] for r in answerable])} | {mean([r['recall_5'] for r in answerable])} "
            f"| {mean([r['tokens'] for r in ok])[:-2]} | {mean([r['wall_s'] for r in group])[:-2]} "
            f"| {mean([sum(r['calls'].values()) for r in group])[:-2]} "
            f"| {sum(bool(r.get('fallback')) for r in ok)} | {kept} "
            f"| {dict(repairs) or 0} | {dict(unrecovered) or 0} | {sum(1 for r in group if r['error'])} |"
        )
    return "\n".join(lines)


def rescore(rows: list[dict[str, Any]], data_dirs: list[Path]) -> int:
    """Recompute `correct` of the rows of `data_dirs`' questions with today's scoring (a scoring
    fix then applies to a finished run: "A or B?" questions beyond dates); how many were rescored."""
    questions = {}
    for data_dir in data_dirs:
        dataset = load_dataset(data_dir)
        questions.update({(dataset.name, question.id): question for question in dataset.questions})
    count = 0
    for row in rows:
        question = questions.get((row["dataset"], row["id"]))
        if question is not None and "short" in row and not row.get("unanswerable"):
            row["correct"] = answer_correct(row["short"], question.answers, question.question)
            count += 1
    return count


def per_question(rows: list[dict[str, Any]]) -> str:
    """One line per (question, agent): gold, short answer, verdict, what was cited."""
    lines = [
        "| set | id | agent | gold | short answer | verdict | cite prec | R@5 | wall s | bridge hops |",
        "|" + "---|" * 10,
    ]
    for row in rows:
        if "tokens" not in row:
            verdict = f"error: {row.get('error')}"
        elif row.get("unanswerable"):
            verdict = "abstained (right)" if row["abstained"] else "answered (invented)"
        else:
            verdict = "right" if row["correct"] else ("abstained" if row["abstained"] else "wrong")
        short = str(row.get("short", "")).replace("|", "/")[:40]
        lines.append(
            f"| {row['dataset']} | {row['id'][-12:]} | {row['agent']} | {str(row.get('gold', ''))[:30]} | {short} "
            f"| {verdict} | {row.get('cite_precision') if row.get('cite_precision') is not None else '–'} "
            f"| {row.get('recall_5') if row.get('recall_5') is not None else '–'} | {row['wall_s']} "
            f"| {_hops(row)} |"
        )
    return "\n".join(lines)


def _hops(row: dict[str, Any]) -> str:
    """A row's bridge chain as "answer -> answer" (an unused hop's answer in brackets)."""
    hops = row.get("hops") or []
    return " → ".join(str(answer)[:24] if used else f"({str(answer)[:24]})" for _, answer, used in hops) or "–"


def interleaved(components: Any, args: argparse.Namespace) -> list[tuple[Any, str, Any]]:
    """(dataset, collection, question) for every set, their corpora loaded, taken in turns (the
    first question of each set, then the second...; answerable ones first): a run stopped early
    still covers every set alike."""
    per_set: list[list[tuple[Any, str, Any]]] = []
    for data_dir in args.data:
        dataset = load_dataset(data_dir)
        collection = collection_name_for(dataset)
        load_corpus(components, dataset, collection)
        chosen = dataset.questions[args.offset : args.offset + args.limit]
        questions = chosen + unanswerable_questions(dataset, args.unanswerable)
        if args.only:  # a re-run of some rows of the run fixed above (same selection, same order)
            questions = [question for question in questions if question.id in args.only]
        per_set.append([(dataset, collection, question) for question in questions])
    return [item for group in itertools.zip_longest(*per_set) for item in group if item is not None]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    if args.report_only:
        rescored = rescore(rows, args.data)
        print(table(rows) + "\n\n" + per_question(rows))
        print(f"\n(accuracy recomputed with today's scoring for {rescored} rows of the sets given by --data)")
        return 0
    done = {(r["dataset"], r["model"], r["agent"], r["id"]) for r in rows}
    agents = [name.strip() for name in args.agents.split(",") if name.strip()]
    for model in args.model:
        components = build(args.out, model, args)
        log = CallLog()
        llm = log.attach(components.llm)
        for dataset, collection, question in interleaved(components, args):
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
                    f"{dataset.name} {name} {question.id}: short {row.get('short', '–')!r} "
                    f"correct {row.get('correct', '–')} abstained {row.get('abstained', '–')} "
                    f"R@5 {row.get('recall_5', '–')} {row['wall_s']} s {row['error'] or ''}",
                    flush=True,
                )
        components.vector_db.close()
    print(table(rows) + "\n\n" + per_question(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
