"""Online querying with DeepSearcher's functions: `query`, `retrieve`, `naive_retrieve`,
`naive_rag_query`, plus `query_result` / `aquery_result` returning the full QueryResult."""

from __future__ import annotations

from typing import Any

from deepsearcher import configuration
from deepsearcher.agent.catalog import check_agent
from deepsearcher.agent.retriever import Retriever
from deepsearcher.app import querying
from deepsearcher.llm._sync import run_sync
from deepsearcher.types import RetrievalResult


def query_timeout(given: float | None = None) -> float:
    """The deadline of one query: `given`, else query_settings.timeout, else DEFAULT_QUERY_TIMEOUT."""
    return querying.query_timeout(configuration.current(), given)


def select_agent(agent: str | None = None) -> Any:
    """The configured agent named `agent` (default: query_settings.agent; auto = the RAGRouter picks)."""
    configuration.ensure_initialized()
    configuration.require_llm()
    name = check_agent(agent or configuration.config.query_settings.get("agent") or "auto")
    return configuration.agents[name]


async def aquery_result(original_query: str, agent: str | None = None, **kwargs: Any) -> Any:
    """Answer with the chosen agent; returns a QueryResult (answer, sources, usage, steps, time).

    `max_tokens` defaults to query_settings.max_tokens (no budget when unset), `timeout`
    (the overall deadline) to `query_timeout()`.
    """
    on_event = kwargs.pop("on_event", None)
    authorized = kwargs.pop("authorized_collections", None)
    request = querying.QueryRequest(
        original_query,
        agent,
        kwargs.pop("collections", None),
        kwargs.pop("max_iter", None),
        kwargs.pop("max_tokens", None),
        kwargs.pop("timeout", None),
        options=kwargs,
    )
    plan = querying.plan_query(configuration.current(), request, authorized)
    return await querying.ask(plan, on_event=on_event)


def query_result(original_query: str, agent: str | None = None, **kwargs: Any) -> Any:
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


_cached_retriever: Retriever | None = None


def configured_retriever() -> Retriever:
    """One Retriever per configured embedding + store, so its collection checks are done once."""
    global _cached_retriever
    configuration.ensure_initialized()
    cached = _cached_retriever
    if (
        cached is None
        or cached.embedding_model is not configuration.embedding_model
        or cached.vector_db is not configuration.vector_db
    ):
        cached = _cached_retriever = Retriever(configuration.embedding_model, configuration.vector_db)
    return cached


def naive_retrieve(query: str, collection: str | None = None, top_k: int = 10) -> list[RetrievalResult]:
    """Retrieval only (no LLM): the best `top_k` chunks of `collection` (default collection when None)."""
    retriever = configured_retriever()
    return retriever.search(query, [collection or retriever.vector_db.default_collection], top_k=top_k)


def naive_rag_query(query: str, collection: str | None = None, top_k: int = 10) -> tuple[str, list[RetrievalResult]]:
    """DeepSearcher's contract: (answer, retrieved_results) from one retrieval and one answer."""
    result = query_result(
        query,
        agent="naive",
        collections=[collection] if collection else None,
        top_k=top_k,
    )
    return result.answer, result.retrieved_results
