"""What the routes do, shared by the DeepSearcher-compatible and the v1 routes.

Store calls block (Milvus, file reads, embeddings), so routes call them through
`in_thread` and the event loop keeps serving other requests meanwhile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TypeVar

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from deepsearcher.app import Components
from deepsearcher.app.collections import require_collections
from deepsearcher.offline_loading import configured_pipeline, with_web_sources
from deepsearcher.offline_loading.pipeline import ProgressCallback
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.server.state import ServerState
from deepsearcher.types.errors import NotReadyError
from deepsearcher.server.auth import Principal
from deepsearcher.server.errors import APIError
from deepsearcher.server.jobs import Job
from deepsearcher.server.paths import check_url, is_url_like, iter_allowed_file_sources, resolve_allowed

T = TypeVar("T")


def server_state(request: Request) -> ServerState:
    return request.app.state.deepsearcher


async def in_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await run_in_threadpool(function, *args, **kwargs)


def components() -> Components:
    """The process's current Components (one reference, swapped whole by init_config)."""
    from deepsearcher import configuration

    if configuration.config is None:
        raise NotReadyError("The server is still starting.")
    return configuration.current()


def target_collection(principal: Principal, name: str | None) -> str:
    """The named collection (or the configured default), checked against the key."""
    if name is None or not name.strip():
        name = components().vector_db.default_collection
    return principal.require(name)


def require_existing(principal: Principal, name: str) -> str:
    """Blocking: `name` normalized when the key may use it (403) and it exists (404)."""
    name = principal.require(name)
    require_collections(components().vector_db, [name], principal.may_use)
    return name


# ---------------------------------------------------------------------- loading


def split_inputs(inputs: list[str], roots: list[Path]) -> tuple[list[Path], list[str]]:
    """Server paths (each checked against the allowed roots) and http(s) URLs; any bad one refuses the request."""
    paths: list[Path] = []
    urls: list[str] = []
    for item in inputs:
        if is_url_like(item):
            urls.append(check_url(item))
        else:
            paths.append(resolve_allowed(item, roots))
    return paths, urls


def require_crawler_if(urls: list[str]) -> None:
    if not urls:
        return
    configuration = components()
    if configuration.web_crawler is None:
        reason = configuration.web_crawler_error or "no web crawler is configured"
        raise APIError(503, f"Cannot load URLs: {reason}")


def submit_load(
    state: ServerState,
    principal: Principal,
    kind: str,
    collection: str,
    description: str | None,
    paths: list[Path],
    urls: list[str],
    force_new_collection: bool = False,
    batch_size: int | None = None,
    crawl_kwargs: dict[str, Any] | None = None,
) -> Job:
    """Queue a job loading `paths` and `urls` into `collection` (recorded so it can be resumed)."""
    spec = {
        "description": description,
        "paths": [str(path) for path in paths],
        "urls": list(urls),
        "force_new_collection": force_new_collection,
        "batch_size": batch_size,
        "crawl": {key: value for key, value in (crawl_kwargs or {}).items() if value is not None},
    }
    inputs = spec["paths"] + urls
    work = load_work(state, collection, spec)
    return state.job_manager().submit(kind, collection, inputs, work, owner=principal.label, spec=spec)


def load_work(state: ServerState, collection: str, spec: dict[str, Any], resuming: bool = False) -> Callable[[ProgressCallback], LoadSummary]:
    """The work of a load job from its recorded spec (a resumed job never drops the collection again)."""
    roots = list(state.settings.allowed_roots)
    paths = [Path(path) for path in spec["paths"]]

    def work(on_progress: ProgressCallback) -> LoadSummary:
        configuration = components()
        pipeline = configured_pipeline(batch_size=spec.get("batch_size"), on_progress=on_progress)
        return pipeline.run(
            with_web_sources(iter_allowed_file_sources(paths, configuration.file_loader, roots), spec["urls"], spec["crawl"]),
            collection_name=collection,
            collection_description=spec.get("description") or "",
            force_new_collection=bool(spec.get("force_new_collection")) and not resuming,
        )

    return work


# ---------------------------------------------------------------------- querying


def agent_for(name: str) -> Any:
    """The agent for `name`, or 503 naming how to configure an LLM."""
    from deepsearcher.online_query import select_agent

    configuration = components()
    if configuration.llm is None:
        reason = str(configuration.llm_error) if configuration.llm_error else "no LLM is configured"
        raise APIError(
            503,
            f"Querying needs an LLM, and none is available: {reason} Configure one under provide_settings.llm "
            "in the config file given to `deepsearcher serve --config`.",
        )
    return select_agent(name)


async def query_collections(principal: Principal, collections: list[str] | None) -> list[str] | None:
    """The caller's collections checked (403 / 404), or None to let the router choose."""
    if not collections:
        return None
    names = principal.require_all(collections)
    for name in names:
        await in_thread(require_existing, principal, name)
    return list(dict.fromkeys(names))


def query_kwargs(
    principal: Principal, collections: list[str] | None, max_iter: int | None, max_tokens: int | None, timeout: float | None = None
) -> dict[str, Any]:
    """The agent's arguments; `timeout` (the overall deadline) defaults to query_settings.timeout, else 300 s."""
    from deepsearcher.online_query import query_timeout

    kwargs: dict[str, Any] = {
        "authorized_collections": principal.authorized_collections,
        "collections": collections,
        "timeout": query_timeout(timeout),
    }
    if max_iter is not None:
        kwargs["max_iter"] = max_iter
    if max_tokens is None:  # the same default as the CLI, MCP and online_query: query_settings.max_tokens
        max_tokens = components().query_settings.get("max_tokens")
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    return kwargs
