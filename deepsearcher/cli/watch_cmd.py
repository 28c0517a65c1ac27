"""`deepsearcher watch`: keep a collection in sync with folders until stopped."""

from __future__ import annotations

import signal
import threading
from typing import Annotated

import typer

from deepsearcher.cli.common import ConfigOption, console, handle_errors, setup


def watch(
    folders: Annotated[list[str], typer.Argument(help="Folders to keep in sync (recursive).")],
    collection_name: Annotated[
        str | None,
        typer.Option("--collection", "--collection-name", help="Target collection (default: the configured default)."),
    ] = None,
    settle: Annotated[
        float,
        typer.Option("--settle", min=0.1, help="Seconds a changed file must stay unchanged before it is loaded."),
    ] = 1.0,
    config: ConfigOption = None,
) -> None:
    """Load FOLDERS, then follow their changes: one line per file loaded, updated, renamed or removed.

    Starting catches up with what changed while nothing watched (a `load --sync`); Ctrl-C or
    SIGTERM stops after the change being stored."""
    from deepsearcher.app.watching import FolderWatcher

    components = setup(config)
    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        if stop.is_set():  # asked twice (e.g. during a long first catch-up): stop now
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    watcher = FolderWatcher(
        components,
        list(folders),
        collection_name,
        settle=settle,
        on_line=lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True),
    )
    try:
        with handle_errors():
            watcher.run(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console.print("stopped watching; starting again catches up with what changed meanwhile", highlight=False)
