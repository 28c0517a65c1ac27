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
from typing import Literal

from pydantic import Field, field_validator

from deepsearcher.agent.base import RAGAgent
from deepsearcher.agent.catalog import agent_names, check_agent
from deepsearcher.agent.events import StepEvent
from deepsearcher.agent.options import AgentOptions, QueryLimits
from deepsearcher.agent.result import QueryResult
from deepsearcher.agent.searchable import searchable_collections
from deepsearcher.app.components import Components
from deepsearcher.app.requests import RequestModel, RequestName, not_blank
from deepsearcher.app.searching import MAX_QUERY_CHARS
from deepsearcher.types.errors import DeepSearcherError, MissingAPIKeyError, NotReadyError

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


class QueryRequest(RequestModel):  # type: ignore[explicit-any]  # pydantic's synthesized __init__
    """A question and its options, as every front-end sends it; None means "the configured
    default" (query_settings). REST validates its body against this very class."""

    question: str = Field(max_length=MAX_QUERY_CHARS)
    agent: RequestName | None = Field(
        default=None,
        description="A registered agent (default: query_settings.agent, else auto: the router picks).",
        json_schema_extra=lambda schema: schema.update(enum=list(agent_names())),
    )
    collections: list[RequestName] | None = Field(
        default=None, max_length=100, description="Search only these (default: the collection router chooses)."
    )
    max_iter: int | None = Field(
        default=None, description="Research rounds at most (the agent's `max_iter` option; bounds: GET /health agents)."
    )
    max_tokens: int | None = Field(default=None, description=QueryLimits.model_fields["max_tokens"].description)
    timeout: float | None = Field(default=None, description=QueryLimits.model_fields["timeout"].description)
    #: the agent's other options (top_k...), checked against its schema
    options: dict[str, object] = Field(
        default_factory=dict,
        max_length=50,
        description="The agent's options by name (checked against its schema; GET /health lists them).",
        examples=[{"top_k": 20}],
    )
    web: Literal["off", "auto", "always"] | None = Field(
        default=None, description="Research the web beside the collections (default: query_settings.web, else off)."
    )

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        return not_blank(value)

    @field_validator("agent")
    @classmethod
    def _registered_agent(cls, value: str | None) -> str | None:
        return None if value is None else check_agent(value)


@dataclass(frozen=True)
class QueryPlan:
    """A checked request: the agent to run and every argument it gets."""

    question: str
    agent: RAGAgent
    options: dict[str, object]  # the agent's options, checked against its schema
    timeout: float
    max_tokens: int | None = None
    collections: list[str] | None = None  # the caller's, checked; None: the agent's router chooses
    authorized: set[str] | None = None
    searchable: list[str] = field(default_factory=list)
    checked: AgentOptions | None = None  # `options`, validated: the agent does not check them again

    @property
    def kwargs(self) -> dict[str, object]:
        """Everything `aquery` gets besides the question."""
        return {
            **self.options,
            "collections": self.collections,
            "authorized_collections": self.authorized,
            "searchable": self.searchable,
            "timeout": self.timeout,
            "checked_options": self.checked,
            **({"max_tokens": self.max_tokens} if self.max_tokens is not None else {}),
        }


def query_timeout(components: Components, given: float | None = None) -> float:
    """The deadline of one query: `given`, else query_settings.timeout, else the LLM's own hint (a
    local CPU server needs far longer), else DEFAULT_QUERY_TIMEOUT."""
    if given is not None:
        return float(given)
    configured = components.query_settings.get("timeout")
    if configured is not None:
        return float(configured)
    hint = getattr(components.llm, "query_timeout_hint", None)
    return float(hint) if hint else DEFAULT_QUERY_TIMEOUT


def no_llm_message(error: DeepSearcherError | None, hint: str) -> str:
    """Why there is no LLM, with the front-end's advice on getting one only where it fits: a missing
    key or no LLM at all. A configured LLM that failed (a wrong model name, a missing package) says
    its own cause and fix, never advice about an API key it does not use."""
    if error is None or isinstance(error, MissingAPIKeyError):
        reason = f" ({error})" if error else ""
        return f"{NO_LLM}{reason}. {hint}".strip()
    return f"The configured LLM could not be set up, and querying needs one: {error}"


def plan_query(
    components: Components,
    request: QueryRequest,
    authorized_collections: Iterable[str] | None = None,
    no_llm_hint: str = "",
) -> QueryPlan:
    """The checked request with its defaults, or the error saying what is wrong (no LLM call yet).

    `authorized_collections`: the collections the caller may use (None: all); the agents'
    routers see only those, and a wrong name lists only those. The collections are checked
    here once (exist, permitted, loaded) and the agent is told so, not asked to check again.
    """
    default_agent = components.query_settings.get("agent")
    name = check_agent(request.agent or (str(default_agent) if default_agent else "auto"))
    limits = QueryLimits.check({"max_tokens": request.max_tokens, "timeout": request.timeout})
    if components.llm is None:
        raise NotReadyError(no_llm_message(components.llm_error, no_llm_hint))
    agent = components.agents[name]
    given = {**request.options, **({"max_iter": request.max_iter} if request.max_iter is not None else {})}
    if request.web is not None:
        given["web"] = request.web
    checked = agent.validated_options(given)  # validated here once; the agent is handed the result
    options = checked.model_dump() if checked is not None else agent.check_options(given)
    authorized = set(authorized_collections) if authorized_collections is not None else None
    collections = list(dict.fromkeys(request.collections)) if request.collections else None
    # every collection empty or out of reach: refused here, before an agent (or its router) calls the LLM
    searchable = searchable_collections(
        components.vector_db, components.embedding_model.dimension, authorized, collections
    )
    configured_budget = components.query_settings.get("max_tokens")
    return QueryPlan(
        request.question,
        agent,
        options,
        timeout=query_timeout(components, limits.timeout),
        max_tokens=limits.max_tokens if limits.max_tokens is not None else configured_budget,
        collections=searchable if collections else None,
        authorized=authorized,
        searchable=searchable,
        checked=checked,
    )


async def ask(plan: QueryPlan, on_event: Callable[[StepEvent], None] | None = None) -> QueryResult:
    """Answer a plan: a QueryResult (answer, sources, usage, steps, time)."""
    return await plan.agent.aquery(
        plan.question,
        on_event=on_event,
        max_tokens=plan.max_tokens,
        authorized_collections=plan.authorized,
        collections=plan.collections,
        timeout=plan.timeout,
        searchable=plan.searchable,
        checked_options=plan.checked,
        **plan.options,
    )


def ask_events(plan: QueryPlan) -> AsyncIterator[StepEvent]:
    """The plan's steps, answer tokens and, last, its `result` event."""
    return plan.agent.astream_events(plan.question, **plan.kwargs)
