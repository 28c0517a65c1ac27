"""DeepSearcher as an MCP server: retrieval, the research agents and loading as tools.

`deepsearcher mcp --config FILE` serves these tools over stdio to any MCP client
(Claude Desktop, IDEs, agent frameworks):

- ``search``: retrieval only, no LLM: the best chunks for a query.
- ``deep_search``: a research agent answers with citations, sources and token usage.
- ``list_collections``: what is loaded.
- ``load``: files, folders and URLs into a collection; local paths only inside
  ``server.allowed_roots`` of the config.

stdout carries the protocol, so everything else (logs, progress) goes to stderr.
Works with the official ``mcp`` SDK 1.x (``FastMCP``) and 2.x (``MCPServer``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from deepsearcher.app import collections, searching
from deepsearcher.app.components import Components
from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.app.querying import QueryRequest, ask, plan_query
from deepsearcher.app.searching import SearchRequest
from deepsearcher.mcp_wire import serve_stdio
from deepsearcher.types.errors import MissingDependencyError, report
from deepsearcher.types.json import JSONObject
from deepsearcher.utils.sync_bridge import run_sync

logger = logging.getLogger(__name__)

__all__ = ["build_server", "run_stdio"]

SERVER_NAME = "deepsearcher"
NO_LLM_HINT = (
    "deep_search cannot answer (search, list_collections and load still work). "
    "Set OPENAI_API_KEY for the server, or point provide_settings.llm.config.base_url at an OpenAI-compatible "
    "server (Ollama, llama.cpp, vLLM) in the --config file."
)

INSTRUCTIONS = (
    "DeepSearcher searches the user's own documents loaded into a vector database. "
    "Use `list_collections` to see what is loaded, `search` for the raw passages that match a query, "
    "and `deep_search` for a researched answer with numbered citations [n] that point to its sources."
)


def _sdk() -> tuple[type, type[Exception]]:
    """The SDK's high-level server class and its ToolError, for mcp 2.x and 1.x."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        try:
            # mcp 1.x: the same classes under their old names (absent from 2.x, hence the ignores)
            from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef,attr-defined]
            from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]
        except ImportError as exc:
            raise MissingDependencyError("mcp", "mcp", "the MCP server") from exc
    return MCPServer, ToolError


# ---------------------------------------------------------------------------- paths
# `load` runs the load service (deepsearcher/app/loading.py) with the REST API's path rules:
# the same config key, the same refusals.


def allowed_roots(config: object) -> list[Path]:
    """`server.allowed_roots` of `config`, validated (absolute, existing folders) and resolved."""
    from deepsearcher.server.settings import ServerSettings

    return ServerSettings.from_config(config).allowed_roots


# ---------------------------------------------------------------------------- tools


class DeepSearcherTools:
    """The work behind each tool, synchronous and independent of the MCP SDK (easy to test).

    It holds the server's components and runs the same use cases (deepsearcher/app) as the CLI
    and the REST API, so a tool answers what `deepsearcher search` or `POST /v1/query` would.
    """

    def __init__(self, components: Components) -> None:
        self.components = components

    def search(self, query: str, collection: str | None = None, top_k: int = 5) -> dict[str, Any]:
        """Retrieval only (no LLM): the `top_k` passages that best match `query`, in `collection` (default:
        every loaded collection), each with the passage of its chunk that matches, its full text, source
        reference, title, collection and score."""
        request = SearchRequest.create(query=query, collections=[collection] if collection else None, top_k=top_k)
        return searching.search(self.components, request).to_dict()

    def deep_search(
        self,
        question: str,
        agent: str | None = None,
        max_iter: int | None = None,
        collections: list[str] | None = None,
        options: dict[str, Any] | None = None,
        web: str | None = None,
    ) -> dict[str, Any]:
        """Research `question` over the loaded documents with an LLM agent and return a cited answer.

        agent (default: the server's query_settings.agent, else auto): auto (a router picks), deep
        (decompose, search, judge, reflect), chain (multi-hop follow-up questions), naive (one retrieval,
        one answer), or another registered agent. max_iter caps research rounds; options sets the agent's
        other options by name (each agent's options, defaults and bounds are in its schema).
        collections limits the search (default: the agent picks). The answer cites sources as [n];
        `short_answer` is the few words that answer ("not found" when the documents do not hold it);
        `sources` lists them with index, reference, title, text, whether they were cited, and the page or
        section and quote that support the answer. web: off, auto or always researches the public web too
        (sources with an http reference and a fetch time); only the question is sent to the web search API."""
        request = QueryRequest.create(
            question=question,
            agent=agent,
            collections=collections or None,
            max_iter=max_iter,
            options=dict(options or {}),
            web=web,
        )
        result = run_sync(ask(plan_query(self.components, request, no_llm_hint=NO_LLM_HINT)))
        usage = result.usage.to_dict()
        return {
            "question": result.question,
            "answer": result.answer,
            "short_answer": result.short_answer,
            "abstained": result.abstained,
            "agent": result.agent,
            "sources": [source.to_dict() for source in result.sources],  # REST's shape
            "usage": usage,
            "wall_seconds": round(result.wall_seconds, 3),
            "stopped_by_budget": result.stopped_by_budget,
        }

    def list_collections(self) -> dict[str, Any]:
        """The collections in the store: name, description, embedding dimension and model, number of sources."""
        return {
            "default_collection": self.components.vector_db.default_collection,
            "collections": [row.to_dict() for row in collections.list_collections(self.components)],
        }

    def load(
        self,
        inputs: list[str],
        collection: str | None = None,
        description: str | None = None,
        max_depth: int = 0,
        max_pages: int | None = None,
        sync: bool = False,
        refresh: bool = False,
    ) -> dict[str, Any]:
        """Load files, folders (recursively) and http(s) URLs into `collection` (created when missing,
        with `description` for the router). Local paths must lie inside the server's allowed roots.
        Unchanged sources are skipped; every failed input is listed with its reason.
        max_depth/max_pages bound crawling from URLs. Stored sources under a given folder that it no
        longer holds are listed in `gone`; with sync=true they are removed. refresh=true also fetches
        the collection's stored web pages again, conditionally (a page not modified is kept)."""
        components = self.components
        request = LoadRequest.create(
            inputs=inputs,
            collection=collection,
            description=description,
            max_depth=max_depth,
            max_pages=max_pages,
            sync=sync,
            refresh=refresh,
        )
        summary = load(components, request, roots=allowed_roots(components.config))
        data = summary.to_dict()
        return {
            "collection": data["collection"],
            "ok": data["ok"],
            "loaded": data["loaded"],
            "replaced": data["replaced"],
            "skipped_unchanged": data["skipped_unchanged"],
            "unsupported": data["unsupported"],
            "failed": [{"source": f["source"], "reason": f["reason"]} for f in data["failed"]],
            "chunks_inserted": data["chunks_inserted"],
            "gone": data["gone"],
            "removed_gone": data["removed_gone"],
            "renamed": data["renamed"],
            "seconds": round(data["seconds"], 3),
        }


def _agent_choices(tool: Callable[..., object]) -> None:
    """Let the tool's input schema list the registered agents (the registry, not a copy of it)."""
    from deepsearcher.agent.catalog import agent_names

    signature = inspect.signature(tool)
    hints = typing.get_type_hints(tool)
    hints["agent"] = Literal[tuple(agent_names())] | None  # type: ignore[valid-type]
    parameters = [parameter.replace(annotation=hints[name]) for name, parameter in signature.parameters.items()]
    tool.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]


def build_server(tools: DeepSearcherTools) -> Any:
    """The MCP server with DeepSearcher's tools.

    Each tool is the method of `tools` of the same name: its signature is the tool's input
    schema and its docstring the description clients see.
    """
    import anyio

    MCPServer, ToolError = _sdk()
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    def expose(method: Callable[..., JSONObject]) -> None:
        @functools.wraps(method)
        async def tool(*args: object, **kwargs: object) -> JSONObject:
            # Embedding, the store and the agents block: run them off the protocol's loop. When the client
            # goes away (stdin closed) the call is abandoned, not waited for (see mcp_wire.serve_stdio).
            try:
                call = functools.partial(method, *args, **kwargs)
                return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
            except Exception as exc:  # noqa: BLE001 - every failure becomes a tool error (unexpected ones logged)
                raise ToolError(report(exc, logger, f"tool {method.__name__}").message) from exc

        if method.__name__ == "deep_search":
            _agent_choices(tool)
        server.tool()(tool)

    for method in (tools.search, tools.deep_search, tools.list_collections, tools.load):
        expose(method)
    return server


def run_stdio(config_path: str | os.PathLike[str] | None = None) -> None:
    """Build the components of `config_path` and serve MCP over stdin/stdout until EOF."""
    from deepsearcher.app.components import build_components
    from deepsearcher.config import Configuration
    from deepsearcher.server.security import configured_secrets
    from deepsearcher.server.settings import ServerSettings
    from deepsearcher.utils import redaction

    _sdk()  # fail before loading models when the SDK is missing
    configuration = Configuration(config_path)
    redaction.install()  # the providers' keys never reach the log on stderr
    redaction.register_secrets(configured_secrets(configuration, ServerSettings.from_config(configuration)))
    # Anything a library prints while the models load must not corrupt the protocol.
    with contextlib.redirect_stdout(sys.stderr):
        components = build_components(configuration)
        allowed_roots(components.config)  # a wrong server.allowed_roots fails now, not at the first load
        server = build_server(DeepSearcherTools(components))
    logger.info("DeepSearcher MCP server ready on stdio")
    try:
        serve_stdio(server)
    finally:
        try:
            components.close()
        except Exception:  # noqa: BLE001 - the server is stopping; closing must not mask why
            logger.warning("closing the vector store failed", exc_info=True)
