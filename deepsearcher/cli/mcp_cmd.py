"""`deepsearcher mcp`: serve search, deep_search, list_collections and load to MCP clients over stdio."""

from __future__ import annotations

import logging
import sys

from deepsearcher.cli.common import ConfigOption, handle_errors


def mcp_command(config: ConfigOption = None) -> None:
    """Run an MCP server on stdin/stdout (for Claude Desktop, IDEs, agent frameworks).

    Local paths can be loaded only inside server.allowed_roots of the config; logs go to stderr.
    """
    from deepsearcher.mcp_server import run_stdio

    # stdout is the protocol: every log line goes to stderr.
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler, "stream", None) is sys.stdout:
            handler.setStream(sys.stderr)
    if not root.handlers:
        logging.basicConfig(
            stream=sys.stderr,
            level=logging.WARNING,
            format="%(levelname)s %(name)s: %(message)s",
        )
    with handle_errors():
        run_stdio(config)
    _leave_now()


def _leave_now() -> None:
    """stdin is closed: the client is gone. Tool calls still running in worker threads (a long
    deep_search, a load) have nobody to answer, and waiting for them kept the process alive for
    minutes, so the process ends here (the store was closed; a load stopped half-way resumes).
    The wire has already logged how many calls it leaves unanswered (mcp_wire.serve_stdio)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)
