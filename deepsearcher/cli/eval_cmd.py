"""`deepsearcher eval`: Recall@k, answer EM/F1 and cost of naive retrieval and the agents on a QA dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from deepsearcher.cli.common import (
    ConfigOption,
    console,
    err_console,
    fail,
    handle_errors,
)
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from deepsearcher.app.components import Components
    from deepsearcher.evaluation.dataset import Dataset

AGENT_HELP = "naive (retrieval only, no LLM) | deep | chain | all, or a comma list such as naive,chain."


def _ints(option: str, text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or any(value < 1 for value in values):
        err_console.print(
            f"[red]Error:[/] {option} takes positive integers separated by commas (e.g. 1,2,3), got '{text}'.",
            highlight=False,
        )
        raise typer.Exit(code=2)
    return list(dict.fromkeys(values))


def _agents(text: str) -> list[str]:
    from deepsearcher.evaluation.runner import eval_agents

    allowed = eval_agents()
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if "all" in names:
        names = allowed
    unknown = [name for name in names if name not in allowed]
    if not names or unknown:
        fail(
            f"unknown agent '{(unknown or [text])[0]}'. Allowed values: {', '.join(allowed)}, all.",
            2,
        )
    return list(dict.fromkeys(names))


def eval_command(
    dataset_dir: Annotated[
        Path,
        typer.Argument(
            help=(
                "Folder with questions.jsonl (id, question, answer, gold_titles[, answer_aliases]) and "
                "corpus.jsonl (title, text)."
            )
        ),
    ],
    agent: Annotated[str, typer.Option("--agent", help=AGENT_HELP)] = "naive",
    max_iter: Annotated[
        str | None,
        typer.Option(
            "--max-iter",
            help="max_iter values for deep/chain, e.g. 1,2,3 (default: query_settings.max_iter).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", help="Evaluate only the first N questions."),
    ] = None,
    top_k: Annotated[str, typer.Option("--top-k", help="The k of Recall@k, e.g. 2,5.")] = "2,5",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Output folder (default: ./eval_output/<dataset>/)."),
    ] = None,
    skip_load: Annotated[
        bool,
        typer.Option(
            "--skip-load",
            help="Use the already loaded collection; do not (re)load the corpus.",
        ),
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Keep the rows already in results.jsonl and run only the missing ones.",
        ),
    ] = False,
    store: Annotated[
        str,
        typer.Option(
            "--store",
            help="own: a store of its own beside the configured one (never shown among your collections); "
            "configured: the configured store itself.",
        ),
    ] = "own",
    unanswerable: Annotated[
        int,
        typer.Option(
            "--unanswerable",
            min=0,
            help="Add N generated questions about an entity absent from the corpus (abstention: the agent "
            "should say it did not find the answer).",
        ),
    ] = 0,
    config: ConfigOption = None,
) -> None:
    """Evaluate retrieval (Recall@k) and answers (accuracy, EM, F1, abstention, citation precision) on a QA dataset.

    Writes JSONL rows, a summary, a Markdown table and plots."""
    from deepsearcher.app.components import build_components
    from deepsearcher.cli.query_cmd import NO_LLM_HINT
    from deepsearcher.config import Configuration
    from deepsearcher.evaluation import (
        EvalRunner,
        build_specs,
        collection_name_for,
        eval_configuration,
        load_dataset,
        summarize,
        write_report,
    )

    agents = _agents(agent)
    ks = sorted(_ints("--top-k", top_k))
    if limit is not None and limit < 1:
        err_console.print(f"[red]Error:[/] --limit must be at least 1, got {limit}.")
        raise typer.Exit(code=2)
    with handle_errors():
        dataset = load_dataset(dataset_dir)
        passages = dataset.corpus()
    if store not in ("own", "configured"):
        fail(f"--store takes own or configured, got '{store}'.", 2)
    needs_llm = any(name != "naive" for name in agents)
    with handle_errors():
        configured = Configuration(config)
        chosen = eval_configuration(configured) if store == "own" else configured
        components = build_components(chosen, skip=() if needs_llm else ("llm",))
    if store == "own":
        uri = chosen.get_provider_config("vector_db")["config"]["uri"]
        err_console.print(f"[dim]Evaluation store: {uri} (--store configured for your own).[/]", highlight=False)
    if needs_llm and components.llm is None:
        err_console.print(
            f"[yellow]{escape(str(components.llm_error or NO_LLM_HINT))}[/] (--agent naive needs no LLM.)",
            highlight=False,
        )
        raise typer.Exit(code=1)
    iterations = _ints("--max-iter", max_iter) if max_iter else [_default_max_iter(components, agents)]
    collection = collection_name_for(dataset)
    output_dir = output or Path("eval_output") / dataset.name

    missing = dataset.missing_gold_titles(passages)
    if missing:
        first = next(iter(missing.items()))
        err_console.print(
            f"[yellow]Warning:[/] {len(missing)} question(s) have gold titles not in the corpus (e.g. "
            f"{first[0]}: {first[1][0]!r}); "
            "they cannot reach full recall.",
            highlight=False,
        )

    with handle_errors():
        if skip_load:
            if not components.vector_db.has_collection(collection):
                err_console.print(
                    f"[red]Error:[/] collection '{collection}' does not exist yet: run without --skip-load "
                    "to load the corpus."
                )
                raise typer.Exit(code=1)
            err_console.print(f"Using collection '{collection}' as it is (--skip-load).")
        else:
            _load(components, dataset, collection, len(passages))
        specs = build_specs(agents, iterations)
        with _EvalProgress(ks) as progress:
            runner = EvalRunner(
                components,
                dataset,
                collection,
                output_dir,
                specs,
                ks=ks,
                limit=limit,
                resume=resume,
                on_start=progress.start,
                on_row=progress.row,
                unanswerable=unanswerable,
            )
            rows = runner.run()
        if runner.dropped_lines:
            err_console.print(
                f"[yellow]Dropped {runner.dropped_lines} unreadable line(s) of {runner.results_path} (an "
                "interrupted write).[/]"
            )
        summary = summarize(rows, ks, specs, dataset=dataset.name, collection=collection)
        paths = write_report(summary, output_dir)
    _print_summary(summary)
    console.print(f"Results: {runner.results_path}", highlight=False, soft_wrap=True)
    console.print(
        f"Summary: {paths['summary']} · {paths['markdown']}",
        highlight=False,
        soft_wrap=True,
    )
    if paths.get("plots_missing"):
        console.print(
            f"Plots:   not written. {paths['plots_missing']}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
    else:
        console.print(
            f"Plots:   {paths['recall_plot']} · {paths['tokens_plot']}",
            highlight=False,
            soft_wrap=True,
        )


def _default_max_iter(components: Components, agents: list[str]) -> int:
    """query_settings.max_iter, else the default of the first iterative agent asked for (its options schema)."""
    from deepsearcher.agent.catalog import option_schema

    configured = components.query_settings.get("max_iter")
    if configured is not None:
        return int(configured)
    for name in agents:
        default = option_schema(name).get("max_iter", {}).get("default")
        if default is not None:
            return int(default)
    return 1  # only naive retrieval: max_iter means nothing to it


def _load(components: Components, dataset: Dataset, collection: str, passages: int) -> None:
    from deepsearcher.evaluation import load_corpus

    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
    task = progress.add_task(f"embedding {dataset.name} into '{collection}'", total=passages)

    def on_progress(event: str, info: dict) -> None:
        if event == "embedded":
            progress.advance(task, info["chunks"])
        elif event == "rebuild":
            progress.console.print(
                f"[yellow]Rebuilding '{collection}':[/] {info['reason']}.",
                highlight=False,
            )

    with progress:
        summary = load_corpus(components, dataset, collection, on_progress=on_progress)
    if summary.skipped_unchanged:
        err_console.print(f"Corpus unchanged: collection '{collection}' already holds it ({passages} passages).")
    else:
        err_console.print(f"Loaded {summary.chunks_inserted} passages into '{collection}' in {summary.seconds:.1f} s.")


class _EvalProgress:
    """A progress bar over (question, agent, max_iter) with the running Recall@k of each configuration."""

    def __init__(self, ks: list[int]) -> None:
        self.ks = ks
        self.sums: dict[str, dict[str, float]] = {}
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("evaluating"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[recall]}"),
            console=err_console,
            transient=True,
        )
        self.task = self.progress.add_task("evaluating", total=None, recall="")

    def __enter__(self) -> _EvalProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, total: int, done: int) -> None:
        self.progress.update(self.task, total=total, completed=done)
        if done:
            self.progress.console.print(f"Resuming: {done} of {total} already done.")

    def row(self, row: dict[str, Any]) -> None:
        label = row["agent"] if row.get("max_iter") is None else f"{row['agent']}@{row['max_iter']}"
        sums = self.sums.setdefault(label, {"n": 0, "failures": 0, **{str(k): 0.0 for k in self.ks}})
        sums["n"] += 1
        sums["failures"] += 1 if row.get("error") else 0
        for k in self.ks:
            sums[str(k)] += row["recall"][str(k)]
        if row.get("error"):
            self.progress.console.print(f"[red]failed[/] {label} {row['id']}: {row['error']}", highlight=False)
        parts = []
        for name, s in self.sums.items():
            recalls = " ".join(f"R@{k} {s[str(k)] / s['n']:.3f}" for k in self.ks)
            failed = f" ({int(s['failures'])} failed)" if s["failures"] else ""
            parts.append(f"{name}: {recalls}{failed}")
        self.progress.update(self.task, advance=1, recall=" · ".join(parts))


def _print_summary(summary: JSONObject) -> None:
    """The summary as a Markdown table: wide tables stay readable and paste as they are."""
    from deepsearcher.evaluation.report import markdown_table

    console.print(
        f"\n[bold]{summary['dataset']}[/]: {summary['questions']} questions, collection '{summary['collection']}'\n",
        highlight=False,
    )
    console.print(markdown_table(summary), markup=False, highlight=False, soft_wrap=True)
    if summary["failures"]:
        console.print(
            f"[yellow]{summary['failures']} question run(s) failed; see the 'error' field in results.jsonl.[/]"
        )
