"""`deepsearcher load`: files, folders and URLs into a collection, with a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
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
from rich.text import Text

from deepsearcher.cli.common import (
    ConfigOption,
    JsonOption,
    console,
    err_console,
    handle_errors,
    print_json,
    setup,
)
from deepsearcher.utils.names import shown

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
    chunk_size: Annotated[
        int | None, typer.Option(help="Characters per chunk (default: what fits the embedding window; MiniLM 835).")
    ] = None,
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
    extensions: Annotated[
        list[str] | None,
        typer.Option(
            "--ext",
            help="Also read files with this extension as plain text (repeat, or comma-separate: --ext cfg,conf).",
        ),
    ] = None,
    text_key: Annotated[
        str | None,
        typer.Option("--text-key", help="The JSON / JSONL field holding each record's text (default: text)."),
    ] = None,
    show_all: Annotated[
        bool,
        typer.Option("--all", help="List every source in the summary (by default: only failed, skipped, changed)."),
    ] = False,
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
        text_extensions=[part for item in extensions or [] for part in item.split(",") if part.strip()],
        text_key=text_key,
    )
    with handle_errors(), _progress(enabled=not as_json) as on_progress:
        summary = load(components, request, on_progress=on_progress)
    if as_json:
        print_json(summary.to_dict())
    else:
        _print_summary(summary, show_all)
    if not summary.ok:
        raise typer.Exit(code=1)


class _SourcesEta(TimeRemainingColumn):
    """The one ETA shown: of the sources bar, whose total is counted before the load starts
    (the chunk total grows as files are parsed, so an ETA from it would only jump about)."""

    def render(self, task: Any) -> Any:
        if not task.fields.get("eta", False):
            return Text("")
        return super().render(task)


def short_path(path: str, width: int = 48) -> str:
    """`path` for one progress line: its name and as many parent folders as fit, cut at a folder."""
    path = shown(path)
    if len(path) <= width:
        return path
    parts = path.split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(kept) + 3 > width:
            break
        kept = f"{part}/{kept}"
    if len(kept) > width:  # one very long name: its start and its extension
        return kept[: width - 12] + "…" + kept[-11:]
    return "…/" + kept


class _progress:
    """A rich progress display fed by the pipeline's progress events.

    The files are counted first ("counted"), so the sources bar has a total and an ETA;
    each source's chunks are counted before it is embedded ("source"), so the chunk bar
    shows how far embedding has come against what is known so far.
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
            _SourcesEta(),
            console=err_console,
            transient=True,
        )
        self.sources = self.progress.add_task("sources", total=None, eta=True)
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
        if event == "counted":
            self.progress.update(self.sources, total=None if info.get("more") else info["files"])
        if event == "failed":
            self.progress.console.print(
                f"[red]failed[/] {escape(shown(info['source']))}: {escape(shown(info['reason']))}", highlight=False
            )
        if event == "source":
            self.chunk_total += info.get("chunks", 0)
            self.progress.update(self.chunks, total=self.chunk_total)
        if event in ("source", "skipped", "failed", "unsupported"):
            self.progress.advance(self.sources)
            name = short_path(str(info.get("source", "")))
            self.progress.update(self.sources, description=f"sources ({escape(name)})")
        elif event == "embedded":
            self.progress.advance(self.chunks, info["chunks"])


_STYLES = {
    "loaded": "green",
    "replaced": "green",
    "unchanged": "dim",
    "skipped": "yellow",
    "failed": "red",
}


def _print_summary(summary: LoadSummary, show_all: bool = False) -> None:
    """The sources that need the user's eye (failed, skipped, changed; every one with --all),
    then the totals and any warning. Names are shown escaped (a newline in a file name)."""
    changed = {item.source for item in summary.changed}
    listed = [
        item for item in summary.sources if show_all or item.outcome in ("failed", "skipped") or item.source in changed
    ]
    if listed:
        sources = Table(title="Sources" if show_all else "Sources that were not loaded, or changed", show_lines=False)
        sources.add_column("source", overflow="fold")
        sources.add_column("outcome")
        sources.add_column("reason", overflow="fold")
        for item in listed:
            outcome = item.outcome if item.fatal or item.outcome != "failed" else "failed (linked page)"
            if item.source in changed:
                outcome += " (changed)"
            style = _STYLES.get(item.outcome, "")
            sources.add_row(
                escape(shown(item.source)),
                f"[{style}]{outcome}[/]" if style else outcome,
                escape(shown(item.reason)),
            )
        console.print(sources)
    hidden = len(summary.sources) - len(listed)
    if hidden:
        console.print(f"[dim]{hidden} loaded or unchanged source(s) not listed: --all lists every source.[/]")
    table = Table(title=f"Loaded into '{escape(summary.collection)}'", show_header=False)
    table.add_row("sources loaded", str(len(summary.loaded)))
    table.add_row("sources replaced (changed)", str(len(summary.replaced)))
    table.add_row("skipped (unchanged)", str(len(summary.skipped_unchanged)))
    table.add_row("skipped (unsupported type)", str(len(summary.unsupported)))
    table.add_row("skipped (other reasons)", str(len(summary.skipped) - len(summary.unsupported)))
    table.add_row("failed", str(len(summary.failed)))
    if summary.changed:
        table.add_row("changed while being read", str(len(summary.changed)))
    table.add_row("chunks inserted", str(summary.chunks_inserted))
    table.add_row("embeddings computed", str(summary.embeddings_computed))
    if summary.embeddings_shared:
        table.add_row("chunks repeating another's text (vector shared)", str(summary.embeddings_shared))
    if summary.chunks_unchanged:
        table.add_row("chunks already stored (unchanged sources)", str(summary.chunks_unchanged))
    if summary.chunks_kept:
        table.add_row("chunks kept from an interrupted load", str(summary.chunks_kept))
    if summary.duplicates_removed:
        table.add_row("duplicate chunks removed", str(summary.duplicates_removed))
    table.add_row("time", f"{summary.seconds:.1f} s")
    console.print(table)
    for warning in summary.warnings:
        err_console.print(f"[yellow]Warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
    if summary.changed:
        err_console.print(
            f"[yellow]Warning:[/] {len(summary.changed)} file(s) changed while being read (listed above): "
            "each was loaded as it was when opened; load them again once they are complete.",
            highlight=False,
            soft_wrap=True,
        )
