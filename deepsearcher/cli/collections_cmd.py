"""`deepsearcher collections list|drop` and `deepsearcher delete`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from deepsearcher.cli.common import (
    ConfigOption,
    JsonOption,
    console,
    handle_errors,
    print_json,
    setup,
)

collections_app = typer.Typer(help="List or drop collections.", no_args_is_help=True)


@collections_app.command("list")
def list_collections(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Collections with their description, embedding model and number of sources."""
    from deepsearcher.app import collections

    components = setup(config)
    with handle_errors():
        rows = collections.list_collections(components)
    if as_json:
        print_json([row.to_dict() for row in rows])
        return
    table = Table()
    for column in ("name", "description", "embedding model", "dim", "sources"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.name, row.description, row.embedding_model or "?", str(row.dim or "?"), str(row.sources))
    console.print(table if rows else "No collections yet: run `deepsearcher load PATH`.")


@collections_app.command("drop")
def drop_collection(
    name: Annotated[str | None, typer.Argument(help="Collection to drop (or give it as --collection).")] = None,
    collection: Annotated[
        str | None,
        typer.Option("--collection", "--collection-name", help="Collection to drop (instead of the NAME argument)."),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    config: ConfigOption = None,
) -> None:
    """Drop a collection and everything in it."""
    from deepsearcher.app import collections

    name = _one_name(name, collection)
    components = setup(config)
    with handle_errors():
        summary = collections.describe_collection(components, name)
        if not yes:
            typer.confirm(
                f"Drop collection '{summary.name}' and all its chunks ({summary.sources} sources)?", abort=True
            )
        collections.drop_collection(components, summary.name)
    console.print(f"Dropped '{summary.name}'.")


def _one_name(argument: str | None, option: str | None) -> str:
    """The collection named by the NAME argument or by --collection, which mean the same."""
    if argument and option and argument != option:
        raise typer.BadParameter(f"two collections given ('{argument}' and '{option}'): name one.")
    if not (argument or option):
        raise typer.BadParameter("name the collection to drop: NAME or --collection NAME.")
    return str(argument or option)


def delete(
    source: Annotated[str, typer.Argument(help="The file path or URL that was loaded.")],
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "--collection-name",
            help="Collection (default: the configured default).",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Remove one source's chunks from a collection."""
    import os

    from deepsearcher.app import collections

    components = setup(config)
    reference = source if "://" in source else os.path.abspath(source)  # a path as the load stored it
    with handle_errors():
        removed = collections.delete_source(components, collection, reference)
    if removed == 0:
        console.print(f"[yellow]Nothing to delete:[/] no chunks from '{source}'.")
        raise typer.Exit(code=1)
    console.print(f"Deleted {removed} chunks of '{source}'.")
