"""Entry point of the `deepsearcher` command."""

from __future__ import annotations

import logging
import os

import typer

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from deepsearcher.cli import help_text  # noqa: E402
from deepsearcher.cli.collections_cmd import collections_app, delete  # noqa: E402
from deepsearcher.cli.eval_cmd import eval_command  # noqa: E402
from deepsearcher.cli.load_cmd import load  # noqa: E402
from deepsearcher.cli.mcp_cmd import mcp_command  # noqa: E402
from deepsearcher.cli.providers_cmd import providers  # noqa: E402
from deepsearcher.cli.query_cmd import query  # noqa: E402
from deepsearcher.cli.search_cmd import search  # noqa: E402
from deepsearcher.cli.serve_cmd import serve  # noqa: E402
from deepsearcher.cli.upstream_argv import CompatTyper  # noqa: E402

help_text.install()
app = CompatTyper(
    name="deepsearcher",
    help="Deep research over your own documents: load, search, ask.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command()(load)
app.command()(search)
app.command()(query)
app.command()(delete)
app.command()(providers)
app.command("eval")(eval_command)
app.command()(serve)
app.command("mcp")(mcp_command)
app.add_typer(collections_app, name="collections")


@app.callback()
def main(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what happens inside."),
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


if __name__ == "__main__":
    app()
