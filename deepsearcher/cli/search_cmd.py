"""`deepsearcher search`: retrieval only, no LLM."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.padding import Padding

from deepsearcher.cli.common import (
    ConfigOption,
    JsonOption,
    activity,
    console,
    handle_errors,
    print_json,
    setup,
)


def search(
    text: Annotated[str, typer.Argument(help="What to look for.")],
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection",
            "--collection-name",
            help="Collection to search (default: the configured default).",
        ),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="How many chunks to show.")] = 5,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the chunks that best match TEXT, with their source and score."""
    with activity("Searching", quiet=as_json):
        from deepsearcher.online_query import naive_retrieve

        setup(config)
        with handle_errors():
            results = naive_retrieve(text, collection=collection, top_k=top_k)
    if as_json:
        print_json([{"rank": rank, **result.to_dict()} for rank, result in enumerate(results, 1)])
        return
    if not results:
        console.print("No matching chunks.")
        return
    # The source is the line a reader copies: it goes on its own line, wrapped, never cut,
    # whatever the terminal's width (a table column would be squeezed to "…").
    for rank, result in enumerate(results, 1):
        title = f"  ({result.title})" if result.title else ""
        console.print(f"[bold]#{rank}[/]  score {result.score:.4f}", highlight=False)
        console.print(
            result.reference + title,
            style="cyan",
            markup=False,
            highlight=False,
            overflow="fold",
        )
        snippet = result.text if len(result.text) <= 300 else result.text[:300] + "…"
        console.print(Padding(snippet, (0, 0, 1, 4)), markup=False, highlight=False)
