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
        list[str] | None,
        typer.Option(
            "--collection",
            "--collection-name",
            help="Search only this collection (repeatable; default: every loaded collection).",
        ),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="How many chunks to show.")] = 5,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show the chunks that best match TEXT, with their source, score and the passage that matches."""
    with activity("Searching", quiet=as_json):
        from deepsearcher.app.searching import SearchRequest
        from deepsearcher.app.searching import search as run_search

        components = setup(config)
        with handle_errors():
            response = run_search(
                components, SearchRequest.create(query=text, collections=collection or None, top_k=top_k)
            )
    if as_json:
        print_json(response.to_dict())
        return
    if not response.hits:
        console.print(f"No matching chunks in {', '.join(response.collections)}.")
        return
    several = len(response.collections) > 1
    # The source is the line a reader copies: it goes on its own line, wrapped, never cut,
    # whatever the terminal's width (a table column would be squeezed to "…").
    for hit in response.hits:
        result = hit.result
        title = f"  ({result.title})" if result.title else ""
        where = f"  in {hit.collection}" if several else ""
        similar = f"  similarity {hit.similarity:.2f}" if hit.similarity is not None else ""
        weak = "  [yellow]weak match[/]" if hit.weak else ""
        console.print(f"[bold]#{hit.rank}[/]  score {result.score:.4f}{similar}{where}{weak}", highlight=False)
        console.print(
            result.reference + title,
            style="cyan",
            markup=False,
            highlight=False,
            overflow="fold",
        )
        console.print(Padding(hit.passage, (0, 0, 1, 4)), markup=False, highlight=False)
    if all(hit.weak for hit in response.hits):
        console.print(
            "[yellow]Only weak matches:[/] nothing loaded seems to be about this; the passages above are "
            "merely the closest.",
            highlight=False,
        )
