"""Options and helpers every command shares: --config, error display, JSON output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from typing_extensions import Annotated

from rich.markup import escape

from deepsearcher.types.errors import classify

console = Console()
err_console = Console(stderr=True)

ConfigOption = Annotated[
    Optional[Path],
    typer.Option("--config", "-c", help="YAML config file (only the keys you change; the rest are defaults).", envvar="DEEPSEARCHER_CONFIG"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]


def setup(config_path: Optional[Path]) -> None:
    """Initialise DeepSearcher from `config_path` (or the defaults), reporting config errors cleanly."""
    from deepsearcher import configuration
    from deepsearcher.config import Configuration

    with handle_errors():
        configuration.init_config(Configuration(config_path))


class handle_errors:
    """Turn expected errors into one red line and exit status 1, not a traceback."""

    def __enter__(self) -> "handle_errors":
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        info = classify(exc)
        if not info.known:
            return False
        fail(info.message, info.exit_code)
        return False  # not reached: fail() raises


def fail(message: str, code: int = 1) -> None:
    """Print `message` as one red error line (brackets in it shown, not read as markup) and exit."""
    err_console.print(f"[bold red]Error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code=code)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
