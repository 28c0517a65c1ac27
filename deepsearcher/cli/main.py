"""Entry point of the `deepsearcher` command."""

from __future__ import annotations

import atexit
import os
import sys
import threading

import typer

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from deepsearcher.cli import help_text  # noqa: E402
from deepsearcher.cli.agents_cmd import agents  # noqa: E402
from deepsearcher.cli.collections_cmd import collections_app, delete  # noqa: E402
from deepsearcher.cli.eval_cmd import eval_command  # noqa: E402
from deepsearcher.cli.graph_cmd import graph_app  # noqa: E402
from deepsearcher.cli.load_cmd import load  # noqa: E402
from deepsearcher.cli.mcp_cmd import mcp_command  # noqa: E402
from deepsearcher.cli.providers_cmd import providers  # noqa: E402
from deepsearcher.cli.query_cmd import query  # noqa: E402
from deepsearcher.cli.search_cmd import search  # noqa: E402
from deepsearcher.cli.serve_cmd import serve  # noqa: E402
from deepsearcher.cli.upstream_argv import CompatTyper  # noqa: E402
from deepsearcher.cli.watch_cmd import watch  # noqa: E402
from deepsearcher.cli.web_cache_cmd import web_cache  # noqa: E402

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
app.command()(agents)
app.command("eval")(eval_command)
app.command()(serve)
app.command("mcp")(mcp_command)
app.command()(watch)
app.add_typer(collections_app, name="collections")
app.add_typer(graph_app, name="graph")
app.command("web-cache")(web_cache)


def _print_version(value: bool) -> None:
    """`deepsearcher --version`: the installed version, before any command or config is read."""
    if value:
        from deepsearcher import __version__

        typer.echo(f"deepsearcher {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what happens inside."),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    from deepsearcher.cli.common import bind_command_context
    from deepsearcher.utils.logfile import route_logs

    bind_command_context(ctx)  # what the command opens (the store) is closed when it ends
    route_logs(verbose)  # library lines (pypdf, pymilvus, gRPC) go to the log file, not the terminal


def run() -> None:
    """The console entry point: run the command, then leave without the interpreter's teardown.

    Tearing down pymilvus, gRPC and Milvus Lite module by module takes 0.5-1 s after the
    output is written. Everything a normal exit does first still runs, in its order:
    non-daemon threads are joined (executors finish), then the atexit handlers (Milvus Lite
    closes its database there), then the output is flushed; only the garbage-collecting
    teardown after that is skipped.
    """
    try:
        app()
        code: int = 0
    except SystemExit as exc:
        code = _exit_status(exc.code)
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_Finalize runs first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`): nothing more can reach it
            code = code or 1
    os._exit(code)


def _exit_status(code: object) -> int:
    """The status a plain `sys.exit(code)` would give (a message is printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    run()
