"""`deepsearcher web-cache`: the web pages fetched for questions asked with --web."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from deepsearcher.cli.common import ConfigOption, JsonOption, console, handle_errors, print_json, setup


def web_cache(
    clear: Annotated[bool, typer.Option("--clear", help="Remove every cached page.")] = False,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the cached web pages (kept apart from your collections for web.cache_ttl_hours), or clear them."""
    from deepsearcher.app.web_cache import clear_web_cache, list_web_cache

    components = setup(config)
    with handle_errors():
        if clear:
            removed = clear_web_cache(components)
            if as_json:
                print_json({"removed": removed})
            else:
                console.print(f"Removed {removed} cached web page{'' if removed == 1 else 's'}.")
            return
        pages = list_web_cache(components)
    if as_json:
        print_json([page.to_dict() for page in pages])
        return
    table = Table()
    for column in ("url", "chunks", "fetched at", "hours left"):
        table.add_column(column)
    for page in pages:
        table.add_row(page.url, str(page.chunks), page.fetched_at, f"{page.expires_in_hours:g}")
    console.print(table if pages else "The web cache is empty: ask a question with --web.")
