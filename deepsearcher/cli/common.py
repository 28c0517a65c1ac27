"""Options and helpers every command shares: --config, error display, JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import click
import typer
from rich.console import Console
from rich.markup import escape

from deepsearcher.types.errors import classify

if TYPE_CHECKING:
    from rich.status import Status

    from deepsearcher.app.components import Components

console = Console()
err_console = Console(stderr=True)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML config file (only the keys you change; the rest are defaults).",
        envvar="DEEPSEARCHER_CONFIG",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]


#: The running command's root context, set by the `deepsearcher` callback. Typer 0.2x carries its
#: own copy of click, so `click.get_current_context()` sees no context inside a Typer command.
_command_context: ContextVar[typer.Context | None] = ContextVar("deepsearcher_command_context", default=None)


def bind_command_context(context: typer.Context) -> None:
    """Remember the command's context so what a command opens is closed when it ends."""
    _command_context.set(context)


#: The spinner of the command's current activity, if one is live (a model load reuses it).
_activity: list[Status] = []


@contextmanager
def activity(description: str, *, quiet: bool = False) -> Iterator[None]:
    """Say at once what a slow command is doing while it opens the store and loads models.

    A spinner on a terminal; one plain line on stderr otherwise (a pipe, a log), so a
    reader sees the command started; nothing when `quiet` (--json output is for programs).
    """
    if quiet:
        yield
        return
    if not err_console.is_terminal:
        err_console.print(f"[dim]{description}…[/]", highlight=False)
        yield
        return
    status = err_console.status(f"{description}…")
    status.start()
    _activity.append(status)
    try:
        yield
    finally:
        _activity.remove(status)
        status.stop()


@contextmanager
def model_spinner(description: str) -> Iterator[None]:
    """A spinner on stderr while a model loads lazily (a plain line when a progress bar is live)."""
    from rich.errors import LiveError

    if _activity:  # the command's spinner says it instead, then goes back to what it said
        previous = _activity[-1].status
        _activity[-1].update(f"{description}…")
        try:
            yield
        finally:
            _activity[-1].update(previous)
        return
    status = err_console.status(f"{description}…")
    try:
        status.start()
    except LiveError:
        err_console.print(f"{description}…", highlight=False)
        yield
        return
    try:
        yield
    finally:
        status.stop()


def setup(config_path: Path | None, *, llm: bool = False) -> Components:
    """The components of `config_path` (or the defaults) for this command, config errors reported cleanly.

    Models load on first use, not here: commands that never embed never import a model library.
    The LLM is built only for the commands that chat (`llm=True`): its SDK takes ~1 s to import.
    """
    from deepsearcher.app.components import build_components
    from deepsearcher.config import Configuration
    from deepsearcher.embedding.base import set_model_load_notifier

    set_model_load_notifier(model_spinner)
    with handle_errors():
        components = build_components(Configuration(config_path), skip=() if llm else ("llm",))
        context = _command_context.get() or click.get_current_context(silent=True)
        if context is not None:  # released when the command ends (a test runs many in one process)
            context.call_on_close(components.close)
        return components
    raise AssertionError("not reached: handle_errors exits")


class handle_errors:
    """Turn expected errors into one red line and exit status 1, not a traceback."""

    def __enter__(self) -> handle_errors:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> Literal[False]:
        if exc is None or not isinstance(exc, Exception):
            return False
        info = classify(exc)
        if not info.known:
            return False
        fail(info.message, info.exit_code)
        return False  # not reached: fail() raises


def fail(message: str, code: int = 1) -> None:
    """Print `message` as one red error line (brackets in it shown, not read as markup) and exit."""
    err_console.print(f"[bold red]Error:[/] {escape(message)}", highlight=False, soft_wrap=True)  # one line
    raise typer.Exit(code=code)


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
