"""`deepsearcher graph rebuild`: give an existing collection its entity graph without re-embedding."""

from __future__ import annotations

from typing import Annotated

import typer

from deepsearcher.cli.common import ConfigOption, JsonOption, console, handle_errors, print_json, setup

graph_app = typer.Typer(help="The entity graph that links chunks by the names they mention.", no_args_is_help=True)


@graph_app.command("rebuild")
def rebuild(
    collection: Annotated[
        str | None,
        typer.Option("--collection", "--collection-name", help="Collection (default: the configured default)."),
    ] = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add the graph to a collection loaded with `graph: false` (or by an older version): its rows
    are copied with their vectors, nothing is re-embedded."""
    from deepsearcher.app import graph

    components = setup(config)
    with handle_errors():
        result = graph.rebuild_graph(components, collection)
    if as_json:
        print_json(result.to_dict())
    elif result.rows:
        console.print(f"Rebuilt the entity graph of '{result.collection}': {result.rows} chunks rewritten.")
    else:
        console.print(f"'{result.collection}' already has its entity graph: nothing to do.")
