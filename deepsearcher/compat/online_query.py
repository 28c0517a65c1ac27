"""DeepSearcher's `online_query` functions: `query`, `retrieve`, `naive_retrieve`,
`naive_rag_query`, plus `query_result` / `aquery_result` returning the full QueryResult.

Each runs the query or search use case (deepsearcher/app) with the components of the last
`init_config` (the built-in defaults when there was none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from deepsearcher.agent.base import RAGAgent
from deepsearcher.agent.catalog import check_agent
from deepsearcher.agent.events import StepEvent
from deepsearcher.agent.result import QueryResult
from deepsearcher.app import querying, searching
from deepsearcher.compat import configuration
from deepsearcher.types import RetrievalResult
from deepsearcher.utils.sync_bridge import run_sync

__all__ = [
    "aquery_result",
    "naive_rag_query",
    "naive_retrieve",
    "query",
    "query_result",
    "query_timeout",
    "retrieve",
    "select_agent",
]


def query_timeout(given: float | None = None) -> float:
    """The deadline of one query: `given`, else query_settings.timeout, else DEFAULT_QUERY_TIMEOUT."""
    return querying.query_timeout(configuration.current(), given)


def select_agent(agent: str | None = None) -> RAGAgent:
    """The configured agent named `agent` (default: query_settings.agent; auto = the RAGRouter picks)."""
    components = configuration.current()
    components.require_llm()
    default = components.query_settings.get("agent")
    return components.agents[check_agent(agent or (str(default) if default else "auto"))]


async def aquery_result(
    original_query: str,
    agent: str | None = None,
    *,
    on_event: Callable[[StepEvent], None] | None = None,
    authorized_collections: Iterable[str] | None = None,
    authorized_collection_set: Iterable[str] | None = None,
    tenant_id: object = None,
    **kwargs: object,
) -> QueryResult:
    """Answer with the chosen agent; returns a QueryResult (answer, sources, usage, steps, time).

    `max_tokens` defaults to query_settings.max_tokens (no budget when unset), `timeout`
    (the overall deadline) to `query_timeout()`; other keywords are the agent's options.
    """
    # authorized_collection_set: DeepSearcher's name for the same thing; tenant_id: DeepSearcher
    # passes it on to custom stores, ours have no tenants
    authorized = authorized_collections if authorized_collections is not None else authorized_collection_set
    request = querying.QueryRequest.create(
        question=original_query,
        agent=agent,
        collections=kwargs.pop("collections", None),
        max_iter=kwargs.pop("max_iter", None),
        max_tokens=kwargs.pop("max_tokens", None),
        timeout=kwargs.pop("timeout", None),
        options=kwargs,
    )
    plan = querying.plan_query(configuration.current(), request, authorized)
    return await querying.ask(plan, on_event=on_event)


def query_result(original_query: str, agent: str | None = None, **kwargs: Any) -> QueryResult:
    return run_sync(aquery_result(original_query, agent=agent, **kwargs))


def query(original_query: str, max_iter: int | None = None, **kwargs: Any) -> tuple[str, list[RetrievalResult], int]:
    """DeepSearcher's contract: (answer, retrieved_results, total_tokens)."""
    result = query_result(original_query, max_iter=max_iter, **kwargs)
    return result.answer, result.retrieved_results, result.total_tokens


def retrieve(
    original_query: str, max_iter: int | None = None, **kwargs: Any
) -> tuple[list[RetrievalResult], list[str], int]:
    """DeepSearcher's contract: (retrieved_results, [], consumed_tokens)."""
    results, tokens, _ = select_agent().retrieve(original_query, max_iter=max_iter, **kwargs)
    return results, [], tokens


def naive_retrieve(query: str, collection: str | None = None, top_k: int = 10) -> list[RetrievalResult]:
    """Retrieval only (no LLM): the best `top_k` chunks of `collection` (None: every loaded collection)."""
    request = searching.SearchRequest.create(query=query, collections=[collection] if collection else None, top_k=top_k)
    return searching.search(configuration.current(), request).results


def naive_rag_query(query: str, collection: str | None = None, top_k: int = 10) -> tuple[str, list[RetrievalResult]]:
    """DeepSearcher's contract: (answer, retrieved_results) from one retrieval and one answer."""
    result = query_result(
        query,
        agent="naive",
        collections=[collection] if collection else None,
        top_k=top_k,
    )
    return result.answer, result.retrieved_results
