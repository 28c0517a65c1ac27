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
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any, Optional

from deepsearcher.types.errors import DeepSearcherError, MissingDependencyError

logger = logging.getLogger(__name__)

__all__ = ["build_server", "run_stdio"]

SERVER_NAME = "deepsearcher"
AGENTS = ("auto", "deep", "chain", "naive")
NO_LLM_HINT = (
    "No LLM is configured, so deep_search cannot answer (search, list_collections and load still work). "
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
            from mcp.server.fastmcp import FastMCP as MCPServer  # mcp 1.x
            from mcp.server.fastmcp.exceptions import ToolError
        except ImportError as exc:
            raise MissingDependencyError("mcp", "mcp", "the MCP server") from exc
    return MCPServer, ToolError


# ---------------------------------------------------------------------------- paths
# The REST API's rules (deepsearcher/server/paths.py) apply here too: the same config
# key, the same refusals. That module needs FastAPI (the `server` extra); without it the
# same rules are checked here.

NO_ROOTS = (
    "Loading local paths is disabled: list the folders clients may load from in server.allowed_roots "
    "of the config (http(s) URLs can always be loaded)."
)


def allowed_roots(config: Any) -> list[Path]:
    """`server.allowed_roots` of `config`, validated (absolute, existing folders) and resolved."""
    try:
        from deepsearcher.server.settings import ServerSettings
    except ImportError:
        roots = (getattr(config, "server_settings", None) or {}).get("allowed_roots") or []
        roots = [roots] if isinstance(roots, str) else roots
        return [Path(os.path.expanduser(str(root))).resolve() for root in roots]
    return ServerSettings.from_config(config).allowed_roots


def _within(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def check_path(given: str, roots: list[Path]) -> Path:
    """The resolved `given` when it lies under an allowed root; DeepSearcherError naming why not.

    Relative paths and `..` are refused; symlinks are resolved before the check.
    """
    try:
        from deepsearcher.server.errors import APIError
        from deepsearcher.server.paths import resolve_allowed
    except ImportError:
        return _check_path_here(given, roots)
    try:
        return resolve_allowed(given, roots)
    except APIError as exc:
        raise DeepSearcherError(exc.message) from exc


def _check_path_here(given: str, roots: list[Path]) -> Path:
    if not roots:
        raise DeepSearcherError(NO_ROOTS)
    if not given.strip() or "\x00" in given:
        raise DeepSearcherError("An empty path cannot be loaded.")
    raw = Path(os.path.expanduser(given.strip()))
    if ".." in raw.parts:
        raise DeepSearcherError(f"Path '{given}' contains '..': give the path without parent-directory steps.")
    if not raw.is_absolute():
        raise DeepSearcherError(f"Path '{given}' is relative: give an absolute path under one of the allowed roots.")
    resolved = raw.resolve()
    if not _within(resolved, roots):
        raise DeepSearcherError(f"Path '{given}' is outside the allowed roots; allowed: {', '.join(map(str, roots))}.")
    return resolved


def _file_sources(paths: list[Path], roots: list[Path]) -> Any:
    """Sources of the checked paths; a file inside a folder that links out of the roots fails."""
    from deepsearcher import configuration

    try:
        from deepsearcher.server.paths import iter_allowed_file_sources
    except ImportError:
        from deepsearcher.loader.file_loader.base import iter_files
        from deepsearcher.offline_loading.sources import LoadedSource, iter_file_sources

        def iter_allowed_file_sources(paths: list[Path], loader: Any, roots: list[Path]) -> Any:
            for path in paths:
                files = iter_files(path) if path.is_dir() else [path]
                for file_path in files:
                    real = Path(file_path).resolve()
                    if not _within(real, roots):
                        yield LoadedSource(str(file_path), error=f"refused: it links to '{real}', outside the allowed roots")
                    else:
                        yield from iter_file_sources([real], loader)

    return iter_allowed_file_sources(paths, configuration.file_loader, roots)


# ---------------------------------------------------------------------------- tools


def _source_dict(source: Any) -> dict[str, Any]:
    return {"index": source.index, "reference": source.reference, "title": source.title, "text": source.text, "cited": source.cited}


class DeepSearcherTools:
    """The work behind each tool, synchronous and independent of the MCP SDK (easy to test)."""

    def __init__(self) -> None:
        self._load_lock = threading.Lock()

    def search(self, query: str, collection: Optional[str] = None, top_k: int = 5) -> dict[str, Any]:
        from deepsearcher import configuration
        from deepsearcher.online_query import naive_retrieve

        if not query.strip():
            raise DeepSearcherError("query is empty.")
        if top_k < 1 or top_k > 100:
            raise DeepSearcherError(f"top_k must be between 1 and 100, got {top_k}.")
        name = collection or configuration.vector_db.default_collection
        if not configuration.vector_db.has_collection(name):
            raise DeepSearcherError(f"No collection named '{name}'. Call list_collections to see the loaded ones.")
        results = naive_retrieve(query, collection=name, top_k=top_k)
        return {
            "collection": name,
            "results": [
                {"rank": rank, "text": r.text, "reference": r.reference, "title": r.title, "score": r.score}
                for rank, r in enumerate(results, 1)
            ],
        }

    def deep_search(self, question: str, agent: str = "auto", max_iter: Optional[int] = None, collections: Optional[list[str]] = None) -> dict[str, Any]:
        from deepsearcher import configuration
        from deepsearcher.online_query import query_result

        if not question.strip():
            raise DeepSearcherError("question is empty.")
        if agent not in AGENTS:
            raise DeepSearcherError(f"Unknown agent '{agent}'. Allowed values: {', '.join(AGENTS)}.")
        if max_iter is not None and max_iter < 1:
            raise DeepSearcherError(f"max_iter must be at least 1, got {max_iter}.")
        if configuration.llm is None:
            reason = f" ({configuration.llm_error})" if configuration.llm_error else ""
            raise DeepSearcherError(NO_LLM_HINT + reason)
        for name in collections or []:
            if not configuration.vector_db.has_collection(name):
                raise DeepSearcherError(f"No collection named '{name}'. Call list_collections to see the loaded ones.")
        result = query_result(question, agent=agent, max_iter=max_iter, collections=collections or None)
        usage = result.usage.to_dict()
        return {
            "question": result.question,
            "answer": result.answer,
            "agent": result.agent,
            "sources": [_source_dict(source) for source in result.sources],
            "usage": usage,
            "wall_seconds": round(result.wall_seconds, 3),
            "stopped_by_budget": result.stopped_by_budget,
        }

    def list_collections(self) -> dict[str, Any]:
        from deepsearcher import configuration

        db = configuration.vector_db
        return {
            "default_collection": db.default_collection,
            "collections": [
                {
                    "name": info.collection_name,
                    "description": info.description or "",
                    "dim": info.dim,
                    "embedding_model": info.embedding_model,
                    "sources": len(db.list_sources(info.collection_name)),
                }
                for info in db.list_collections()
            ],
        }

    def load(
        self,
        inputs: list[str],
        collection: Optional[str] = None,
        description: Optional[str] = None,
        max_depth: int = 0,
        max_pages: Optional[int] = None,
    ) -> dict[str, Any]:
        from deepsearcher import configuration
        from deepsearcher.offline_loading import IngestionPipeline, is_url

        if not inputs:
            raise DeepSearcherError("inputs is empty: give absolute file or folder paths, or http(s) URLs.")
        roots = allowed_roots(configuration.config)
        urls: list[str] = []
        paths: list[Path] = []
        for item in inputs:
            if is_url(item.strip()):
                urls.append(item.strip())
            elif "://" in item:
                raise DeepSearcherError(f"'{item}': only http:// and https:// URLs can be loaded.")
            else:
                paths.append(check_path(item, roots))
        if not 0 <= max_depth <= 10:
            raise DeepSearcherError(f"max_depth must be between 0 and 10, got {max_depth}.")
        if max_pages is not None and max_pages < 1:
            raise DeepSearcherError(f"max_pages must be at least 1, got {max_pages}.")
        if urls:
            configuration.require_web_crawler()  # no crawler (missing extra or key): say so before loading anything
        crawl: dict[str, Any] = {"max_depth": max_depth}
        if max_pages is not None:
            crawl["max_pages"] = max_pages

        def sources() -> Any:
            yield from _file_sources(paths, roots)
            if urls:
                from deepsearcher.offline_loading.web_sources import iter_web_sources

                yield from iter_web_sources(configuration.require_web_crawler(), urls, **crawl)

        with self._load_lock:
            settings = configuration.config.load_settings
            pipeline = IngestionPipeline(
                embedding=configuration.embedding_model,
                vector_db=configuration.vector_db,
                chunk_size=settings.get("chunk_size", 1500),
                chunk_overlap=settings.get("chunk_overlap", 100),
                batch_size=settings.get("batch_size", 64),
                window_size=settings.get("window_size", 300),
            )
            summary = pipeline.run(sources(), collection_name=collection, collection_description=description or "")
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
            "seconds": round(data["seconds"], 3),
        }


def build_server(tools: DeepSearcherTools | None = None) -> Any:
    """The MCP server with DeepSearcher's tools; call after `init_config`."""
    import anyio

    MCPServer, ToolError = _sdk()
    tools = tools or DeepSearcherTools()
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    async def call(fn: Any, *args: Any) -> dict[str, Any]:
        # Embedding, the store and the agents block: run them off the protocol's loop.
        try:
            return await anyio.to_thread.run_sync(fn, *args)
        except (DeepSearcherError, ImportError, OSError, ValueError) as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    async def search(query: str, collection: Optional[str] = None, top_k: int = 5) -> dict[str, Any]:
        """Retrieval only (no LLM): the `top_k` passages of `collection` (default: the configured
        default collection) that best match `query`, each with its text, source reference, title and score."""
        return await call(tools.search, query, collection, top_k)

    @server.tool()
    async def deep_search(question: str, agent: str = "auto", max_iter: Optional[int] = None, collections: Optional[list[str]] = None) -> dict[str, Any]:
        """Research `question` over the loaded documents with an LLM agent and return a cited answer.

        agent: auto (a router picks), deep (decompose, search, judge, reflect), chain (multi-hop
        follow-up questions) or naive (one retrieval, one answer). max_iter caps research rounds.
        collections limits the search (default: the agent picks). The answer cites sources as [n];
        `sources` lists them with index, reference, title, text and whether they were cited."""
        return await call(tools.deep_search, question, agent, max_iter, collections)

    @server.tool()
    async def list_collections() -> dict[str, Any]:
        """The collections in the store: name, description, embedding dimension and model, number of sources."""
        return await call(tools.list_collections)

    @server.tool()
    async def load(
        inputs: list[str],
        collection: Optional[str] = None,
        description: Optional[str] = None,
        max_depth: int = 0,
        max_pages: Optional[int] = None,
    ) -> dict[str, Any]:
        """Load files, folders (recursively) and http(s) URLs into `collection` (created when missing,
        with `description` for the router). Local paths must lie inside the server's allowed roots.
        Unchanged sources are skipped; every failed input is listed with its reason.
        max_depth/max_pages bound crawling from URLs."""
        return await call(tools.load, inputs, collection, description, max_depth, max_pages)

    return server


def run_stdio(config_path: str | os.PathLike[str] | None = None) -> None:
    """Initialise DeepSearcher from `config_path` and serve MCP over stdin/stdout until EOF."""
    from deepsearcher import configuration
    from deepsearcher.config import Configuration

    _sdk()  # fail before loading models when the SDK is missing
    # Anything a library prints while the models load must not corrupt the protocol.
    with contextlib.redirect_stdout(sys.stderr):
        configuration.init_config(Configuration(config_path))
        allowed_roots(configuration.config)  # a wrong server.allowed_roots fails now, not at the first load
        server = build_server()
    logger.info("DeepSearcher MCP server ready on stdio")
    try:
        server.run("stdio")
    finally:
        vector_db = configuration.vector_db
        if vector_db is not None and hasattr(vector_db, "close"):
            with contextlib.suppress(Exception):
                vector_db.close()
