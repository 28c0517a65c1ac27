"""Summaries of an evaluation: summary.json, a Markdown table and PNG plots.

Quality numbers (Recall@k, all-found rate, EM, F1) are means over every row of a
configuration, a failed question counting as 0. Cost numbers (tokens, LLM calls,
wall time) are means over the rows that finished, since a failed run's usage is unknown.
Recall is recomputed from each row's retrieved titles, so a resumed evaluation may ask
for other k than the run that wrote the rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from deepsearcher.evaluation.runner import RunSpec
from deepsearcher.evaluation.scoring import all_found, recall_at_k

__all__ = ["markdown_table", "summarize", "write_plots", "write_report"]

SUMMARY_FILE = "summary.json"
MARKDOWN_FILE = "summary.md"
RECALL_PLOT = "recall_vs_max_iter.png"
TOKENS_PLOT = "tokens_vs_max_iter.png"


def _mean(values: Iterable[float | int | None]) -> float | None:
    present = [float(value) for value in values if value is not None]
    return sum(present) / len(present) if present else None


def _group_summary(spec: RunSpec, every_row: list[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    unanswerable = [row for row in every_row if row.get("unanswerable")]
    rows = [row for row in every_row if not row.get("unanswerable")]
    finished = [row for row in every_row if not row.get("error")]
    answered = spec.agent != "naive"
    return {
        "accuracy": _mean((row.get("accuracy") or 0.0) for row in rows) if answered and rows else None,
        "abstention": _mean(float(bool(row.get("abstained"))) for row in unanswerable)
        if answered and unanswerable
        else None,
        "citation_precision": _mean(row.get("citation_precision") for row in rows) if answered else None,
        "citation_support": _mean(row.get("citation_support") for row in rows) if answered else None,
        "unanswerable": len(unanswerable),
        "agent": spec.agent,
        "max_iter": spec.max_iter,
        "label": spec.label,
        "n": len(every_row),
        "failures": len(every_row) - len(finished),
        "recall": {
            str(k): _mean(recall_at_k(row["retrieved_titles"], row["gold_titles"], k) for row in rows) for k in ks
        },
        "all_found": _mean(float(all_found(row["retrieved_titles"], row["gold_titles"])) for row in rows),
        "em": _mean((row.get("em") or 0.0) for row in rows) if answered and rows else None,
        "f1": _mean((row.get("f1") or 0.0) for row in rows) if answered and rows else None,
        "mean_tokens": _mean(row.get("tokens") for row in finished),
        "mean_llm_calls": _mean(row.get("llm_calls") for row in finished),
        "mean_wall_seconds": _mean(row.get("wall_seconds") for row in finished),
    }


def summarize(
    rows: list[dict[str, Any]],
    ks: Sequence[int],
    specs: Sequence[RunSpec] | None = None,
    dataset: str | None = None,
    collection: str | None = None,
) -> dict[str, Any]:
    """One entry per agent × max_iter (in `specs` order, or the order rows first show them)."""
    ks = sorted(set(ks))
    by_spec: dict[RunSpec, list[dict[str, Any]]] = {spec: [] for spec in (specs or [])}
    for row in rows:
        by_spec.setdefault(RunSpec(row["agent"], row.get("max_iter")), []).append(row)
    return {
        "dataset": dataset or next((row.get("dataset") for row in rows if row.get("dataset")), None),
        "collection": collection,
        "ks": ks,
        "questions": len({row["id"] for row in rows}),
        "rows": len(rows),
        "failures": sum(1 for row in rows if row.get("error")),
        "groups": [_group_summary(spec, group, ks) for spec, group in by_spec.items()],
        "per_question": [_verdict(row) for row in rows if row.get("agent") != "naive"],
    }


def _verdict(row: dict[str, Any]) -> dict[str, Any]:
    """One answered question: gold, short answer and whether it was right, abstained or invented."""
    if row.get("error"):
        verdict = "error"
    elif row.get("unanswerable"):
        verdict = "abstained (right)" if row.get("abstained") else "answered (invented)"
    else:
        verdict = "right" if row.get("accuracy") else ("abstained" if row.get("abstained") else "wrong")
    return {
        "id": row["id"],
        "agent": RunSpec(row["agent"], row.get("max_iter")).label,
        "gold": row.get("gold_answer"),
        "short_answer": row.get("short_answer"),
        "verdict": verdict,
        "citation_precision": row.get("citation_precision"),
    }


def _fmt(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the summary table (shared by Markdown and the terminal)."""
    ks = summary["ks"]
    header = [
        "agent",
        "max_iter",
        "n",
        *(f"Recall@{k}" for k in ks),
        "all found",
        "accuracy",
        "abstention",
        "cite precision",
        "cite support",
        "EM",
        "F1",
        "mean tokens",
        "mean LLM calls",
        "mean wall s",
        "failures",
    ]
    cells = []
    for group in summary["groups"]:
        cells.append(
            [
                group["agent"],
                "–" if group["max_iter"] is None else str(group["max_iter"]),
                str(group["n"]),
                *(_fmt(group["recall"][str(k)], 3) for k in ks),
                _fmt(group["all_found"], 3),
                _fmt(group.get("accuracy"), 3),
                _fmt(group.get("abstention"), 3),
                _fmt(group.get("citation_precision"), 3),
                _fmt(group.get("citation_support"), 3),
                _fmt(group["em"], 3),
                _fmt(group["f1"], 3),
                _fmt(group["mean_tokens"], 1),
                _fmt(group["mean_llm_calls"], 2),
                _fmt(group["mean_wall_seconds"], 3),
                str(group["failures"]),
            ]
        )
    return header, cells


def markdown_table(summary: dict[str, Any]) -> str:
    header, cells = table_rows(summary)
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|",
    ]
    lines.extend("| " + " | ".join(row) + " |" for row in cells)
    return "\n".join(lines) + "\n"


def _markdown_document(summary: dict[str, Any]) -> str:
    title = f"# Evaluation: {summary['dataset']}" if summary.get("dataset") else "# Evaluation"
    notes = (
        "\nRecall@k: share of gold titles among the first k distinct retrieved titles. "
        "all found: every gold title anywhere in the retrieved titles. accuracy: the gold answer "
        "(or an alias) contained in the short answer (for 'A or B' questions, the other one absent). abstention: "
        "share of the generated unanswerable questions answered 'not found'. cite precision: cited sources "
        "holding the gold answer. cite support: cited sources holding the short answer given, right or "
        "wrong (does each citation point at a passage that states what it is cited for). EM / F1 against "
        "the short answer (best over its aliases). Failed questions "
        "count as 0 in quality columns and are left out of cost columns. naive = retrieval only, no LLM.\n"
    )
    lines = ["", "| id | agent | gold | short answer | verdict | cite precision |", "|---|---|---|---|---|---:|"]
    for row in summary.get("per_question", []):
        cells = [row["id"], row["agent"], row["gold"] or "", row["short_answer"] or "", row["verdict"]]
        cells = [str(cell).replace("|", "/") for cell in cells] + [_fmt(row["citation_precision"], 2)]
        lines.append("| " + " | ".join(cells) + " |")
    per_question = "\n".join(lines) + "\n" if len(lines) > 3 else ""
    return f"{title}\n\n{markdown_table(summary)}{notes}{per_question}"


def write_plots(summary: dict[str, Any], output_dir: str | Path) -> list[Path]:
    """recall_vs_max_iter.png (one panel per k) and tokens_vs_max_iter.png; naive is a flat line."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        from deepsearcher.types.errors import MissingDependencyError

        raise MissingDependencyError("matplotlib", "eval", "evaluation plots") from exc

    output_dir = Path(output_dir)
    groups = summary["groups"]
    ks = summary["ks"]
    iterations = sorted({g["max_iter"] for g in groups if g["max_iter"] is not None})

    def draw(axes: Any, value_of: Any, ylabel: str) -> None:
        agents = list(dict.fromkeys(g["agent"] for g in groups))
        for agent in agents:
            points = [(g["max_iter"], value_of(g)) for g in groups if g["agent"] == agent and value_of(g) is not None]
            if not points:
                continue
            if agent == "naive" or points[0][0] is None:
                value = points[0][1]
                if iterations:
                    axes.plot(
                        [iterations[0], iterations[-1]],
                        [value, value],
                        linestyle="--",
                        color="grey",
                        label=f"{agent} (no iterations)",
                    )
                else:
                    axes.plot(
                        [0],
                        [value],
                        marker="o",
                        color="grey",
                        label=f"{agent} (no iterations)",
                    )
                continue
            points.sort()
            axes.plot([x for x, _ in points], [y for _, y in points], marker="o", label=agent)
        axes.set_xlabel("max_iter")
        axes.set_ylabel(ylabel)
        if iterations:
            axes.set_xticks(iterations)
        else:
            axes.set_xticks([0])
            axes.set_xticklabels(["–"])
        axes.grid(True, alpha=0.3)
        if axes.get_legend_handles_labels()[0]:
            axes.legend(fontsize="small")

    name = summary.get("dataset") or "evaluation"
    paths = []
    figure = Figure(figsize=(4.5 * len(ks), 4), dpi=100)
    for index, k in enumerate(ks, start=1):
        axes = figure.add_subplot(1, len(ks), index)
        draw(axes, lambda g, k=k: g["recall"][str(k)], f"Recall@{k}")
        axes.set_ylim(0, 1.05)
        axes.set_title(f"{name}: Recall@{k}")
    figure.tight_layout()
    FigureCanvasAgg(figure).print_png(str(output_dir / RECALL_PLOT))
    paths.append(output_dir / RECALL_PLOT)

    figure = Figure(figsize=(5.5, 4), dpi=100)
    axes = figure.add_subplot(1, 1, 1)
    draw(axes, lambda g: g["mean_tokens"], "mean tokens per question")
    axes.set_title(f"{name}: tokens")
    figure.tight_layout()
    FigureCanvasAgg(figure).print_png(str(output_dir / TOKENS_PLOT))
    paths.append(output_dir / TOKENS_PLOT)
    return paths


def write_report(summary: dict[str, Any], output_dir: str | Path) -> dict[str, Any]:
    """summary.json, summary.md and, when matplotlib is installed, the plots in `output_dir`.

    Returns the paths by kind; without matplotlib the plot paths are None and `plots_missing`
    says in one line how to get them (everything else is written: plots are optional).
    """
    from deepsearcher.types.errors import MissingDependencyError

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (output_dir / MARKDOWN_FILE).write_text(_markdown_document(summary), encoding="utf-8")
    paths: dict[str, Any] = {
        "summary": output_dir / SUMMARY_FILE,
        "markdown": output_dir / MARKDOWN_FILE,
    }
    try:
        paths["recall_plot"], paths["tokens_plot"] = write_plots(summary, output_dir)
    except MissingDependencyError as exc:
        paths.update(recall_plot=None, tokens_plot=None, plots_missing=str(exc))
    return paths
