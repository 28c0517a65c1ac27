"""`deepsearcher load`: files, folders and URLs into a collection, with a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from deepsearcher.cli.common import (
    ConfigOption,
    JsonOption,
    console,
    err_console,
    handle_errors,
    print_json,
    setup,
)

if TYPE_CHECKING:  # the loading pipeline (and its model stack) is imported only when `load` runs
    from deepsearcher.offline_loading.summary import LoadSummary


def load(
    inputs: Annotated[list[str], typer.Argument(help="Files, folders (recursive) or http(s) URLs.")],
    collection_name: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "--collection-name",
            help="Target collection (default: the configured default).",
        ),
    ] = None,
    collection_desc: Annotated[
        str | None,
        typer.Option(
            "--collection-desc",
            help="What the collection holds (the router reads this).",
        ),
    ] = None,
    force_new_collection: Annotated[
        bool,
        typer.Option("--force-new-collection", help="Drop and recreate the collection first."),
    ] = False,
    chunk_size: Annotated[int | None, typer.Option(help="Characters per chunk (default 1500).")] = None,
    chunk_overlap: Annotated[
        int | None,
        typer.Option(help="Characters shared by neighbouring chunks (default 100)."),
    ] = None,
    batch_size: Annotated[int | None, typer.Option(help="Chunks embedded per batch.")] = None,
    max_depth: Annotated[
        int,
        typer.Option("--max-depth", help="Follow links this many levels from each URL."),
    ] = 0,
    max_pages: Annotated[
        int | None,
        typer.Option("--max-pages", help="Stop crawling after this many pages."),
    ] = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Load documents into the vector store. Unchanged sources are skipped; failures are listed."""
    from deepsearcher.app.loading import LoadRequest, load

    components = setup(config)
    request = LoadRequest(
        list(inputs),
        collection_name,
        collection_desc,
        force_new_collection,
        chunk_size,
        chunk_overlap,
        batch_size,
        max_depth=max_depth,
        max_pages=max_pages,
    )
    with handle_errors(), _progress(enabled=not as_json) as on_progress:
        summary = load(components, request, on_progress=on_progress)
    if as_json:
        print_json(summary.to_dict())
    else:
        _print_summary(summary)
    if not summary.ok:
        raise typer.Exit(code=1)


class _progress:
    """A rich progress display fed by the pipeline's progress events.

    Each source's chunks are counted before it is embedded (its "source" event), so the
    chunk bar has a total (what is known so far), a percentage and an ETA.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        )
        self.sources = self.progress.add_task("sources", total=None)
        self.chunks = self.progress.add_task("chunks embedded", total=None)
        self.chunk_total = 0

    def __enter__(self):
        if not self.enabled:
            return None
        self.progress.start()
        return self.on_event

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.stop()

    def on_event(self, event: str, info: dict) -> None:
        if event == "failed":
            self.progress.console.print(f"[red]failed[/] {info['source']}: {info['reason']}", highlight=False)
        if event == "source":
            self.chunk_total += info.get("chunks", 0)
            self.progress.update(self.chunks, total=self.chunk_total)
        if event in ("source", "skipped", "failed", "unsupported"):
            self.progress.advance(self.sources)
            self.progress.update(self.sources, description=f"sources ({info.get('source', '')[-40:]})")
        elif event == "embedded":
            self.progress.advance(self.chunks, info["chunks"])


_STYLES = {
    "loaded": "green",
    "replaced": "green",
    "unchanged": "dim",
    "skipped": "yellow",
    "failed": "red",
}


def _print_summary(summary: LoadSummary) -> None:
    """Every source by name with what happened to it, then the totals and any warning."""
    if summary.sources:
        sources = Table(title="Sources", show_lines=False)
        sources.add_column("source", overflow="fold")
        sources.add_column("outcome")
        sources.add_column("reason", overflow="fold")
        for item in summary.sources:
            outcome = item.outcome if item.fatal or item.outcome != "failed" else "failed (linked page)"
            style = _STYLES.get(item.outcome, "")
            sources.add_row(item.source, f"[{style}]{outcome}[/]" if style else outcome, item.reason)
        console.print(sources)
    table = Table(title=f"Loaded into '{summary.collection}'", show_header=False)
    table.add_row("sources loaded", str(len(summary.loaded)))
    table.add_row("sources replaced (changed)", str(len(summary.replaced)))
    table.add_row("skipped (unchanged)", str(len(summary.skipped_unchanged)))
    table.add_row("skipped (unsupported type)", str(len(summary.unsupported)))
    table.add_row("skipped (other reasons)", str(len(summary.skipped) - len(summary.unsupported)))
    table.add_row("failed", str(len(summary.failed)))
    table.add_row("chunks inserted", str(summary.chunks_inserted))
    table.add_row("embeddings computed", str(summary.embeddings_computed))
    if summary.chunks_kept or summary.duplicates_removed:
        table.add_row("chunks kept from an interrupted load", str(summary.chunks_kept))
        table.add_row("duplicate chunks removed", str(summary.duplicates_removed))
    table.add_row("time", f"{summary.seconds:.1f} s")
    console.print(table)
    for warning in summary.warnings:
        err_console.print(f"[yellow]Warning:[/] {warning}", highlight=False, soft_wrap=True)
