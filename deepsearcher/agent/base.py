"""Agent contracts: `@describe_class`, BaseAgent and RAGAgent with sync, async and streaming APIs."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar, cast

from deepsearcher.agent import prompts
from deepsearcher.agent.budget import fit_passages, room_for_passages
from deepsearcher.agent.citations import group_sources, source_label
from deepsearcher.agent.collection_router import (
    CollectionRouter,
    authorized_from,
    nothing_to_search,
    store_kwargs_from,
)
from deepsearcher.agent.context import RunContext, both_at_once
from deepsearcher.agent.events import EventCallback, StepEvent
from deepsearcher.agent.extract import as_passages, extract_answer
from deepsearcher.agent.grounding import NOT_FOUND_SHORT, abstain, check_answer, unanswerable_reason
from deepsearcher.agent.options import AgentOptions, validate_options
from deepsearcher.agent.result import QueryResult, Source
from deepsearcher.agent.retriever import Retriever
from deepsearcher.agent.searchable import searchable_collections
from deepsearcher.agent.web_source import WEB_DESCRIPTION, WebSource, web_note
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.llm._sync import run_sync
from deepsearcher.llm.base import BaseLLM
from deepsearcher.types import RetrievalResult, deduplicate_results
from deepsearcher.utils.contracts import attached_shapes
from deepsearcher.vector_db.base import BaseVectorDB

T = TypeVar("T")

#: How many of the best retrieved chunks an agent answers from when its LLM judge kept none.
FALLBACK_CHUNKS = 3


def _search_score(result: RetrievalResult) -> float:
    """The fallback's default order: one search's scores (several searches' are not comparable)."""
    return result.score


def describe_class(description: str) -> Callable[[Any], Any]:
    """Attach a description the RAGRouter shows the LLM when it picks an agent."""

    def decorator(cls: Any) -> Any:
        cls.__description__ = description
        return cls

    return decorator


class BaseAgent(ABC):
    """Anything that can be invoked with a question."""

    @abstractmethod
    def invoke(self, query: str, **kwargs: Any) -> Any:
        """Run the agent."""


@dataclass
class AgentOutput:
    """What an agent's `_execute` produces before it is wrapped into a QueryResult."""

    answer: str
    sources: list[Source] = field(default_factory=list)
    results: list[RetrievalResult] = field(default_factory=list)
    agent: str = ""


class RAGAgent(BaseAgent):
    """An agent that retrieves from the vector store and answers with citations.

    Subclasses implement `_retrieve` (and may override `_execute`). The public API:
    `aquery` / `query_result` return a QueryResult; `astream_events` yields step events
    then a final "result" event; `query` and `retrieve` keep DeepSearcher's tuples.
    """

    answer_style = prompts.ANSWER_STYLE_SHORT
    max_sources = 30
    #: The agent's per-call options with their defaults and bounds (see deepsearcher/agent/options.py):
    #: built from query_settings, overridden per call, validated the same way by every front-end.
    Options: ClassVar[type[AgentOptions]] = AgentOptions
    #: The options' values, also as attributes (DeepSearcher's agents had `self.max_iter`...).
    options: AgentOptions
    top_k: int
    #: What the registry needs to list the agent (see deepsearcher/agent/catalog.py): whether it
    #: researches in rounds, its place in the RAGRouter's list (None: the router never picks it),
    #: a label for the web page.
    iterative = False
    route_rank: int | None = None
    routes_agents = False
    label = ""
    #: The web beside the private collections (the query's `web` option: off, auto, always); the
    #: component builder sets it. None: a question asked with web on answers private-only, saying so.
    web_source: WebSource | None = None
    web: str = "off"

    def __init__(
        self,
        llm: BaseLLM,
        embedding_model: BaseEmbedding,
        vector_db: BaseVectorDB,
        **options: Any,
    ) -> None:
        """`options`: values for the fields of `Options` (None: its default); `route_collection=False`
        (DeepSearcher's switch) searches every permitted collection without asking the LLM; other
        keywords are ignored; `text_window_splitter=False` (DeepSearcher's switch) answers from each
        chunk's own text instead of its wider window."""
        self.route_collection = bool(options.pop("route_collection", True))
        self.text_window_splitter = bool(options.pop("text_window_splitter", True))
        self.llm = llm
        self.embedding_model = embedding_model
        self.vector_db = vector_db
        given = {key: value for key, value in options.items() if key in self.Options.model_fields and value is not None}
        self.options = validate_options(self.Options, given, f"{type(self).__name__} options", ValueError)
        for key, value in self.options:
            setattr(self, key, value)
        self.retriever = Retriever(embedding_model, vector_db)
        self.collection_router = CollectionRouter(llm=llm, vector_db=vector_db, dim=embedding_model.dimension)

    @classmethod
    def from_settings(
        cls,
        llm: BaseLLM,
        embedding_model: BaseEmbedding,
        vector_db: BaseVectorDB,
        settings: Mapping[str, Any],
        agents: Sequence[RAGAgent] = (),
    ) -> RAGAgent:
        """The agent configured by `settings` (query_settings); routers also get the routable `agents`."""
        options = {key: settings[key] for key in cls.Options.model_fields if settings.get(key) is not None}
        return cls(llm=llm, embedding_model=embedding_model, vector_db=vector_db, **options)

    @property
    def name(self) -> str:
        return type(self).__name__

    # steps subclasses build on --------------------------------------------------
    @abstractmethod
    async def _retrieve(self, query: str, ctx: RunContext, collections: list[str]) -> list[RetrievalResult]:
        """Find the chunks the answer will be written from."""

    async def _execute(self, query: str, ctx: RunContext, collections: list[str] | None = None) -> AgentOutput:
        results = await self._gather(query, ctx, collections)
        answer, sources = await self._answer(query, results, ctx)
        return AgentOutput(answer=answer, sources=sources, results=results, agent=self.name)

    async def _gather(self, query: str, ctx: RunContext, collections: list[str] | None) -> list[RetrievalResult]:
        """The chunks to answer from: the collections, then `_retrieve`; or what a user's hook of
        an attached shape retrieves (upstream's `retrieve` overrides: agent/_upstream.py)."""
        for shape in _agent_shapes():
            hooked = await shape.gather(self, query, ctx, collections, whole=True)
            if hooked is not None:
                return hooked[0]
        web = str(ctx.option("web", self.web))
        if web == "auto" and self.web_source is not None:
            ctx.extra["web_candidate"] = WEB_DESCRIPTION  # the collection router lists the web too
        selected = await self._collections(query, ctx, collections)
        self.retriever.start_warm_up(selected, **ctx.store_kwargs)
        if web == "always" or ctx.extra.get("web_wanted"):
            selected = await self._with_web(query, ctx, selected)
        return await self._retrieve(query, ctx, selected)

    async def _with_web(self, query: str, ctx: RunContext, selected: list[str]) -> list[str]:
        """`selected` and the web cache, once the web source fetched this question's pages into it;
        `selected` alone when the web part failed (said in a step and at the end of the answer)."""
        source = self.web_source
        if source is None:
            ctx.emit("web_search", provider="", query=None, results=0, error="no web search is set up for this agent")
            ctx.extra["web_unavailable"] = "no web search is set up for this agent"
            return selected
        private: list[str] = []
        if source.settings.query_from_private and selected:  # the user's opt-in: private text may shape the query
            found = await self.retriever.asearch(query, selected, top_k=3, **ctx.store_kwargs)
            private = [result.text for result in found]
        if await source.gather(query, ctx, self.llm, private):
            return [*selected, source.collection]
        return selected

    async def _collections(self, query: str, ctx: RunContext, collections: list[str] | None) -> list[str]:
        """The caller's collections (within the authorized set, holding documents) or the
        CollectionRouter's choice (all permitted ones when it picks none, or when `route_collection`
        is off); never none: the LLM would make an answer up from nothing."""
        if collections:
            if ctx.searchable is not None:  # checked by the caller (the query service) already
                chosen = [name for name in collections if name in ctx.searchable]
            else:
                chosen = searchable_collections(self.vector_db, None, ctx.authorized_collections, collections)
            ctx.emit("collections", collections=chosen, routed=False)
            return chosen
        router = self.collection_router
        if not self.route_collection:
            chosen = self._permitted(router.all_collections, ctx)
            ctx.emit("collections", collections=chosen, routed=False)
        else:
            chosen = await self._route(query, ctx)
        if not chosen:
            raise nothing_to_search([info.collection_name for info in router.candidates(ctx)])
        return chosen

    def _permitted(self, names: Sequence[str], ctx: RunContext) -> list[str]:
        """`names` within the query's authorized set that hold documents."""
        searchable = ctx.searchable
        return [
            name
            for name in dict.fromkeys(names)
            if (ctx.authorized_collections is None or name in ctx.authorized_collections)
            and (name in searchable if searchable is not None else self.vector_db.has_documents(name))
        ]

    async def _route(self, query: str, ctx: RunContext) -> list[str]:
        """The CollectionRouter's choice, or a user's routing hook's (an attached shape's)."""
        for shape in _agent_shapes():
            chosen = await shape.route(self, query, ctx)
            if chosen is not None:
                return chosen
        return await self.collection_router.aroute(query, ctx)

    async def _answer(
        self,
        question: str,
        results: list[RetrievalResult],
        ctx: RunContext,
        **extra: str,
    ) -> tuple[str, list[Source]]:
        shown = deduplicate_results(results)[: self.max_sources]
        if not shown:  # no passage to answer from: say so rather than let the LLM invent one
            ctx.emit("answer", length=len(prompts.NOT_FOUND), sources=0, llm=False)
            ctx.extra.update(short_answer=NOT_FOUND_SHORT, abstained=True)
            return prompts.NOT_FOUND, []
        sources = group_sources(shown, self._passage_text)  # a source is a document: its chunks merged
        entries = [f"[{s.index}] ({source_label(s)})\n{s.text}" for s in sources]
        template = extra.pop("template", prompts.ANSWER)
        bare = template.format(question=question, sources="", style=self.answer_style, **extra)
        fitted, cut, dropped = fit_passages(entries, room_for_passages(self.llm, bare))
        if cut or dropped:  # a small context window: the best-ranked passages first
            ctx.emit("context_trimmed", step="answer", kept=len(fitted), cut=cut, dropped=dropped)
            sources = sources[: len(fitted)]
        prompt = template.format(
            question=question,
            sources="\n\n".join(fitted),
            style=self.answer_style,
            **extra,
        )
        missing = unanswerable_reason(question, sources)  # no LLM call: a small model would invent one
        extracted, written = ("", "") if missing else await self._extract_and_write(question, shown, prompt, ctx)
        checked = (
            abstain(question, sources, missing)
            if missing
            else check_answer(
                question,
                written,
                sources,
                extracted,
                decided=ctx.decided,
                rewritten=ctx.rewritten_question,
                hop_answers=ctx.hop_answers,
            )
        )
        ctx.extra.update(short_answer=checked.short_answer, claims=checked.claims, abstained=checked.abstained)
        supported = sum(claim.supported for claim in checked.claims)
        ctx.emit("answer", length=len(checked.answer), sources=len(sources), supported=supported, extracted=extracted)
        if checked.abstained:
            ctx.emit("abstained", reason=checked.answer.split(". What was found")[0], written=written, llm=not missing)
        return checked.answer, sources

    async def _extract_and_write(
        self, question: str, shown: list[RetrievalResult], prompt: str, ctx: RunContext
    ) -> tuple[str, str]:
        """(the extracted concise answer, the written answer): two independent calls, made at the
        same time so the extraction adds no LLM round to the wait (benchmarks/query_latency.py).
        An LLM serving one call at a time (a local model) gains nothing from that and would take
        them in either order: it gets them in turn, extraction first, as it always has."""
        if getattr(self.llm, "max_concurrency", 1) > 1:
            return await both_at_once(self._extract(question, shown, ctx), ctx.stream_answer(self.llm, prompt))
        return await self._extract(question, shown, ctx), await ctx.stream_answer(self.llm, prompt)

    async def _extract(self, question: str, shown: list[RetrievalResult], ctx: RunContext) -> str:
        """The concise answer's words copied from the first passages in the order shown (agent/extract.py)."""
        return await extract_answer(self.llm, question, as_passages(shown), ctx)

    def _passage_text(self, result: RetrievalResult) -> str:
        """What the LLM reads of a chunk: its wider window, or with `text_window_splitter` off its own text."""
        return result.wider_text if self.text_window_splitter else result.text

    def _fallback(
        self,
        retrieved: list[RetrievalResult],
        ctx: RunContext,
        step: str,
        keep: int = FALLBACK_CHUNKS,
        key: Callable[[RetrievalResult], Any] = _search_score,
    ) -> list[RetrievalResult]:
        """When the LLM's relevance step kept nothing of what was retrieved (small models say NO to
        everything), the `keep` best retrieved chunks by `key` (default: search score), said in a
        `fallback` event; the answer step then works from real passages instead of none."""
        if not retrieved:
            return []
        best = sorted(deduplicate_results(retrieved), key=key, reverse=True)[:keep]
        ctx.emit("fallback", step=step, kept=len(best), retrieved=len(retrieved))
        return best

    # public API -----------------------------------------------------------------
    async def aquery(
        self,
        query: str,
        *,
        on_event: EventCallback | None = None,
        max_tokens: int | None = None,
        authorized_collections: Iterable[str] | None = None,
        collections: list[str] | None = None,
        timeout: float | None = None,
        searchable: Iterable[str] | None = None,
        checked_options: AgentOptions | None = None,
        **kwargs: Any,
    ) -> QueryResult:
        """`timeout`: the query's overall deadline in seconds; research stops early to answer
        in time, and a call still running at the deadline raises QueryTimeoutError.
        `searchable`: the collections the caller found loaded and permitted this very query (the
        query service checks once); None: the agent checks them itself.
        `checked_options`: this agent's options as the caller already validated them (`validated_options`;
        the query service), used instead of validating the keywords again.
        DeepSearcher's `authorized_collection_set` is the same as `authorized_collections`;
        its `tenant_id` goes to every vector-store search."""
        kwargs["authorized_collections"] = authorized_collections
        store_kwargs = store_kwargs_from(kwargs)
        authorized = authorized_from(kwargs)
        ctx = RunContext(
            on_event=on_event,
            max_tokens=max_tokens,
            timeout=timeout,
            authorized_collections=authorized,
            options=self._options_for(kwargs, checked_options),
            store_kwargs=store_kwargs,
        )
        ctx.searchable = list(searchable) if searchable is not None else None
        ctx.given_options = {key: value for key, value in kwargs.items() if value is not None}
        output = await self._execute(query, ctx, collections=collections)
        note = web_note(ctx)
        if note:
            output.answer = f"{output.answer}\n\n{note}"
        return QueryResult(
            question=query,
            answer=output.answer,
            agent=output.agent or self.name,
            sources=output.sources,
            retrieved_results=output.results,
            usage_by_step=dict(ctx.usage_by_step),
            steps=ctx.steps,
            wall_seconds=ctx.elapsed(),
            stopped_by_budget=ctx.stopped_by_budget,
            stopped_by_deadline=ctx.stopped_by_deadline,
            short_answer=ctx.extra.get("short_answer", ""),
            claims=ctx.extra.get("claims", []),
            abstained=bool(ctx.extra.get("abstained", False)),
        )

    def check_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The per-call options a query with `options` runs with; BadInputError naming a wrong one."""
        return self._check_options(dict(options))

    def validated_options(self, options: Mapping[str, Any]) -> AgentOptions | None:
        """`options` over the agent's own, validated once: pass the result to `aquery(checked_options=)`.
        None for an agent that checks options its own way (the RAGRouter: each routed agent's schema)."""
        if type(self)._check_options is not RAGAgent._check_options:
            return None
        given = {key: value for key, value in options.items() if value is not None}
        return validate_options(self.Options, {**self.options.model_dump(), **given}, f"{self.name} options")

    def _options_for(self, kwargs: dict[str, Any], checked: AgentOptions | None) -> dict[str, Any]:
        """The options a query runs with: the caller's validated ones (of this agent's schema), else the keywords'."""
        if isinstance(checked, self.Options):
            return checked.model_dump()
        return self._check_options(kwargs)

    def _check_options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Per-call options travel in the RunContext, not on the agent: the agent's own, overridden by
        those given (checked against `Options`; a wrong one is BadInputError naming it)."""
        given = {key: value for key, value in kwargs.items() if value is not None}
        checked = validate_options(self.Options, {**self.options.model_dump(), **given}, f"{self.name} options")
        return checked.model_dump()

    def query_result(self, query: str, **kwargs: Any) -> QueryResult:
        """Synchronous `aquery` (also works inside a running event loop, e.g. Jupyter)."""
        return run_sync(self.aquery(query, **kwargs))

    async def astream_events(self, query: str, **kwargs: Any) -> AsyncIterator[StepEvent]:
        """Step events as they happen, then one "result" event carrying the QueryResult."""
        queue: asyncio.Queue[StepEvent | None] = asyncio.Queue()
        task = asyncio.ensure_future(self.aquery(query, on_event=queue.put_nowait, **kwargs))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        while (event := await queue.get()) is not None:
            yield event
        result = await task
        yield StepEvent("result", {"result": result})

    def query(self, query: str, **kwargs: object) -> tuple[str, list[RetrievalResult], int]:
        """DeepSearcher's contract: (answer, retrieved_results, total_tokens)."""
        result = self.query_result(query, **kwargs)
        return result.answer, result.retrieved_results, result.total_tokens

    def retrieve(self, query: str, **kwargs: object) -> tuple[list[RetrievalResult], int, dict[str, Any]]:
        """DeepSearcher's contract: (retrieved_results, total_tokens, metadata), no final answer."""
        return run_sync(self.async_retrieve(query, **kwargs))

    async def async_retrieve(self, query: str, **kwargs: Any) -> tuple[list[RetrievalResult], int, dict[str, Any]]:
        """DeepSearcher's async `retrieve` (same keywords, same tuple); `retrieve` runs it."""
        collections = kwargs.pop("collections", None)
        ctx = self._step_context(kwargs)
        for shape in _agent_shapes():  # a user's step methods (upstream's ChainOfRAG loop)
            hooked = await shape.gather(self, query, ctx, collections, whole=False)
            if hooked is not None:
                return hooked[0], ctx.total_tokens, hooked[1]
        selected = await self._collections(query, ctx, collections)
        self.retriever.start_warm_up(selected, **ctx.store_kwargs)
        results = await self._retrieve(query, ctx, selected)
        return results, ctx.total_tokens, {"steps": [step.to_dict() for step in ctx.steps]}

    def _step_context(self, kwargs: dict[str, Any]) -> RunContext:
        """A RunContext for a call outside `aquery` from DeepSearcher's keywords (its
        `authorized_collection_set`, `tenant_id` and per-call options)."""
        store_kwargs = store_kwargs_from(kwargs)
        authorized = authorized_from(kwargs)
        ctx = RunContext(
            authorized_collections=authorized, options=self._check_options(kwargs), store_kwargs=store_kwargs
        )
        ctx.given_options = {key: value for key, value in kwargs.items() if value is not None}
        return ctx

    def _run_step(self, step: Callable[[RunContext], Awaitable[T]], **kwargs: Any) -> tuple[T, int]:
        """One agent step on its own, blocking: (its value, the tokens it used). DeepSearcher's
        agents exposed their steps as such methods (`_generate_sub_queries`, ...), which tests and
        subclasses call."""

        async def run() -> tuple[T, int]:
            ctx = self._step_context(kwargs)
            return await step(ctx), ctx.total_tokens

        return run_sync(run())

    def invoke(self, query: str, **kwargs: object) -> tuple[str, list[RetrievalResult], int]:
        return self.query(query, **kwargs)


class AgentShape(Protocol):
    """Another way of extending agents a query may take (upstream DeepSearcher's overridable hooks:
    deepsearcher/agent/_upstream.py), attached from outside this module."""

    async def gather(
        self, agent: RAGAgent, query: str, ctx: RunContext, collections: list[str] | None, *, whole: bool
    ) -> tuple[list[RetrievalResult], dict[str, Any]] | None:
        """(results, metadata) from a user's retrieval hook, or None when the agent has none."""
        ...

    async def route(self, agent: RAGAgent, query: str, ctx: RunContext) -> list[str] | None:
        """The collections a user's routing hook picks, or None when the router is ours."""
        ...


def _agent_shapes() -> list[AgentShape]:
    return [cast(AgentShape, shape) for shape in attached_shapes("agent")]
