"""`deepsearcher load`: files, folders and URLs into a collection, with a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

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
    from rich.progress import Task

    from deepsearcher.offline_loading.summary import LoadSummary


def load(
    inputs: Annotated[
        list[str] | None, typer.Argument(help="Files, folders (recursive) or http(s) URLs.", show_default=False)
    ] = None,
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
    sync: Annotated[
        bool,
        typer.Option(
            "--sync",
            help="Also remove stored sources under the given folders that no longer exist there "
            "(without it they are only named). Renamed files keep their stored vectors.",
        ),
    ] = False,
    refresh: Annotated[
        bool,
        typer.Option(
            "--refresh",
            help="Also fetch again every web page stored in the collection, conditionally (ETag / "
            "Last-Modified): pages not modified are skipped, changed ones replaced.",
        ),
    ] = False,
    show_all: Annotated[
        bool,
        typer.Option("--all", help="List every source in the summary (by default: only failed, skipped, changed)."),
    ] = False,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Load documents into the vector store. Unchanged sources are skipped; failures are listed."""
    from deepsearcher.app.loading import LoadRequest, load

    with handle_errors():  # a value out of bounds: one line naming it, before anything is built
        request = LoadRequest.create(
            inputs=list(inputs or []),
            collection=collection_name,
            description=collection_desc,
            force_new_collection=force_new_collection,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            batch_size=batch_size,
            max_depth=max_depth,
            max_pages=max_pages,
            text_extensions=[part for item in extensions or [] for part in item.split(",") if part.strip()],
            text_key=text_key,
            sync=sync,
            refresh=refresh,
        )
    components = setup(config)
    progress = _progress(enabled=not as_json)
    try:
        with handle_errors(), progress as on_progress:
            summary = load(components, request, on_progress=on_progress)
    except KeyboardInterrupt:
        err_console.print(progress.interrupted_line(request.collection), highlight=False, soft_wrap=True)
        raise typer.Exit(code=130) from None
    if as_json:
        print_json(summary.to_dict())
    else:
        _print_summary(summary, show_all)
    if not summary.ok:
        raise typer.Exit(code=1)


class _SourcesEta(TimeRemainingColumn):
    """The one ETA shown: of the sources bar, whose total is counted before the load starts
    (the chunk total grows as files are parsed, so an ETA from it would only jump about)."""

    def render(self, task: Task) -> Text:
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
        self.sources_done = 0
        self.chunks_embedded = 0

    def interrupted_line(self, collection: str | None) -> str:
        """The one line a stopped load ends with: how far it came, and that re-running resumes."""
        where = f"'{escape(collection)}'" if collection else "the collection"
        return (
            f"[yellow]Stopped.[/] {self.sources_done} source(s) done and {self.chunks_embedded} chunk(s) embedded "
            f"into {where} are kept; run the same command again to resume (stored chunks are not embedded again)."
        )

    def __enter__(self):
        if not self.enabled:
            return None
        self.progress.start()
        return self.on_event

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.stop()

    def on_event(self, event: str, info: dict) -> None:
        if event in ("source", "skipped", "failed", "unsupported"):
            self.sources_done += 1
        elif event == "embedded":
            self.chunks_embedded += info["chunks"]
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
    title = f"Loaded into '{escape(summary.collection)}'" if summary.worked else "Nothing was stored"
    table = Table(title=title, show_header=False)
    table.add_row("sources loaded", str(len(summary.loaded)))
    table.add_row("sources replaced (changed)", str(len(summary.replaced)))
    table.add_row("skipped (unchanged)", str(len(summary.skipped_unchanged)))
    table.add_row("skipped (unsupported type)", str(len(summary.unsupported)))
    table.add_row("skipped (other reasons)", str(len(summary.skipped) - len(summary.unsupported)))
    table.add_row("failed", str(len(summary.failed)))
    if summary.renamed:
        table.add_row("renamed (stored vectors kept)", str(len(summary.renamed)))
    if summary.gone:
        table.add_row(
            "removed (gone from the folder)" if summary.removed_gone else "gone from the folder, still stored",
            str(len(summary.gone)),
        )
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
    if summary.index_declared:
        table.add_row("index (the collection grew past exact search)", summary.index_declared)
    table.add_row("time", f"{summary.seconds:.1f} s")
    console.print(table)
    _print_gone(summary)
    for warning in summary.warnings:
        err_console.print(f"[yellow]Warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
    if summary.changed:
        err_console.print(
            f"[yellow]Warning:[/] {len(summary.changed)} file(s) changed while being read (listed above): "
            "each was loaded as it was when opened; load them again once they are complete.",
            highlight=False,
            soft_wrap=True,
        )


def _print_gone(summary: LoadSummary) -> None:
    """Name the stored sources whose files are gone: removed with --sync, else still searchable."""
    if not summary.gone:
        return
    names = ", ".join(escape(shown(reference)) for reference in summary.gone[:10])
    more = f" and {len(summary.gone) - 10} more" if len(summary.gone) > 10 else ""
    if summary.removed_gone:
        console.print(
            f"Removed {len(summary.gone)} stored source(s) that no longer exist: {names}{more}",
            highlight=False,
            soft_wrap=True,
        )
    else:
        err_console.print(
            f"[yellow]Note:[/] {len(summary.gone)} stored source(s) no longer exist under the loaded folder(s) "
            f"and are still searchable: {names}{more}; --sync removes them.",
            highlight=False,
            soft_wrap=True,
        )
