"""The query use case, written once: what `deepsearcher query`, `POST /v1/query` (JSON and
SSE), MCP's `deep_search`, `online_query` and the eval runner all run.

`plan_query` checks a request and fills its defaults from `query_settings` (agent,
max_tokens, timeout) before anything calls the LLM: the question, the agent's name, the
iteration bound, an LLM being there, and the collections (each must exist and be one the
caller may use, and at least one must hold documents: else NoSearchableDataError). `ask`
answers a plan; `ask_events` streams its steps, answer tokens and result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from deepsearcher.agent.catalog import check_agent
from deepsearcher.agent.collection_router import searchable_collections
from deepsearcher.agent.events import StepEvent
from deepsearcher.app.collections import require_collections
from deepsearcher.app.components import Components
from deepsearcher.types.errors import BadInputError, NotReadyError

__all__ = [
    "DEFAULT_QUERY_TIMEOUT",
    "QueryPlan",
    "QueryRequest",
    "ask",
    "ask_events",
    "plan_query",
    "query_timeout",
]

#: A query's overall deadline (seconds) when neither the request nor query_settings.timeout sets one.
DEFAULT_QUERY_TIMEOUT = 300.0

NO_LLM = "No LLM is configured, and querying needs one"


@dataclass(frozen=True)
class QueryRequest:
    """A question and its options; None means "the configured default" (query_settings)."""

    question: str
    agent: str | None = None
    collections: list[str] | None = None
    max_iter: int | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    options: dict[str, Any] = field(default_factory=dict)  # other agent arguments (top_k...), passed through


@dataclass(frozen=True)
class QueryPlan:
    """A checked request: the agent to run and every argument it gets."""

    question: str
    agent: Any
    kwargs: dict[str, Any]


def query_timeout(components: Components, given: float | None = None) -> float:
    """The deadline of one query: `given`, else query_settings.timeout, else DEFAULT_QUERY_TIMEOUT."""
    if given is not None:
        return float(given)
    configured = components.query_settings.get("timeout")
    return float(configured) if configured is not None else DEFAULT_QUERY_TIMEOUT


def plan_query(
    components: Components,
    request: QueryRequest,
    authorized_collections: Iterable[str] | None = None,
    no_llm_hint: str = "",
) -> QueryPlan:
    """The checked request with its defaults, or the error saying what is wrong (no LLM call yet).

    `authorized_collections`: the collections the caller may use (None: all); the agents'
    routers see only those, and a wrong name lists only those.
    """
    if not request.question or not request.question.strip():
        raise BadInputError("The question is empty.")
    name = check_agent(request.agent or components.query_settings.get("agent") or "auto")
    if request.max_iter is not None and request.max_iter < 1:
        raise BadInputError(f"max_iter must be at least 1, got {request.max_iter}.")
    if request.max_tokens is not None and request.max_tokens < 1:
        raise BadInputError(f"max_tokens must be at least 1, got {request.max_tokens}.")
    if components.llm is None:
        reason = f" ({components.llm_error})" if components.llm_error else ""
        raise NotReadyError(f"{NO_LLM}{reason}. {no_llm_hint}".strip())
    authorized = set(authorized_collections) if authorized_collections is not None else None
    collections = None
    if request.collections:
        visible: Callable[[str], bool] = (lambda _: True) if authorized is None else authorized.__contains__
        collections = require_collections(components.vector_db, request.collections, visible)
    # every collection empty or out of reach: refused here, before an agent (or its router) calls the LLM
    searchable_collections(components.vector_db, components.embedding_model.dimension, authorized, collections)
    kwargs: dict[str, Any] = {
        **request.options,
        "collections": collections,
        "authorized_collections": authorized,
        "timeout": query_timeout(components, request.timeout),
    }
    max_tokens = request.max_tokens if request.max_tokens is not None else components.query_settings.get("max_tokens")
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if request.max_iter is not None:
        kwargs["max_iter"] = request.max_iter
    return QueryPlan(request.question, components.agents[name], kwargs)


async def ask(plan: QueryPlan, on_event: Callable[[StepEvent], None] | None = None) -> Any:
    """Answer a plan: a QueryResult (answer, sources, usage, steps, time)."""
    return await plan.agent.aquery(plan.question, on_event=on_event, **plan.kwargs)


def ask_events(plan: QueryPlan) -> AsyncIterator[StepEvent]:
    """The plan's steps, answer tokens and, last, its `result` event."""
    return plan.agent.astream_events(plan.question, **plan.kwargs)
