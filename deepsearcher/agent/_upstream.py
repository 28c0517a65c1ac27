"""Agents used the way upstream DeepSearcher's were: adapted here, not in the core.

Upstream's agents were extended by overriding (or replacing on the instance, as its tests do)
their synchronous hooks: `retrieve` / `async_retrieve` (the whole retrieval), ChainOfRAG's step
methods (`_reflect_get_subquery`, `_retrieve_and_answer`, `_get_supported_docs`,
`_check_has_enough_info`) and `CollectionRouter.invoke`. `agent/base.py` asks the shape
attached here whether a query takes one of those paths; ours has no branch of its own for them.

Attached once, by `deepsearcher/agent/__init__.py` (cheaply: this module imports the agent
stack only when an agent runs); nothing else imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from deepsearcher.utils.contracts import attach_shape, is_own

if TYPE_CHECKING:
    from deepsearcher.agent.base import RAGAgent
    from deepsearcher.agent.chain_of_rag import ChainOfRAG
    from deepsearcher.agent.context import RunContext
    from deepsearcher.types import RetrievalResult

#: ChainOfRAG's step methods, in the order upstream's `retrieve` loop calls them.
CHAIN_STEPS = ("_reflect_get_subquery", "_retrieve_and_answer", "_get_supported_docs", "_check_has_enough_info")


class UpstreamAgentShape:
    """The `AgentShape` of upstream DeepSearcher's overridable agent hooks."""

    async def gather(
        self, agent: RAGAgent, query: str, ctx: RunContext, collections: list[str] | None, *, whole: bool
    ) -> tuple[list[RetrievalResult], dict[str, object]] | None:
        """What a user's hook retrieves, or None when the agent uses none. `whole`: the query's
        whole retrieval (`retrieve` / `async_retrieve` overrides count); else only the step methods
        (the call comes from our own `async_retrieve`, which such an override may wrap)."""
        import asyncio

        from deepsearcher.agent.base import RAGAgent

        if whole and not is_own(agent.async_retrieve, RAGAgent.async_retrieve):
            given: dict[str, object] = {**ctx.given_options, **ctx.store_kwargs}
            if collections:
                given["collections"] = collections
            found = await ctx.bounded(agent.async_retrieve(query, **given), "retrieve")
            return _recorded(found, ctx)
        if whole and not is_own(agent.retrieve, RAGAgent.retrieve):
            keywords: dict[str, object] = {**ctx.given_options, **ctx.store_kwargs}  # what the caller gave
            if ctx.authorized_collections is not None:
                keywords.setdefault("authorized_collection_set", set(ctx.authorized_collections))
            if collections:
                keywords["collections"] = collections
            found = await ctx.bounded(asyncio.to_thread(agent.retrieve, query, **keywords), "retrieve")
            return _recorded(found, ctx)
        if _overrides_chain_steps(agent):
            keywords = {**ctx.store_kwargs}
            if ctx.authorized_collections is not None:
                keywords.setdefault("authorized_collection_set", set(ctx.authorized_collections))
            found = await ctx.bounded(asyncio.to_thread(_chain_loop, agent, query, ctx, keywords), "retrieve")
            return _recorded(found, ctx)
        return None

    async def route(self, agent: RAGAgent, query: str, ctx: RunContext) -> list[str] | None:
        """A user's `CollectionRouter.invoke` override, kept within the authorized set; when it
        picks nothing, every permitted collection holding documents (said in the event). None when
        the router is ours."""
        import asyncio

        from deepsearcher.agent.collection_router import CollectionRouter
        from deepsearcher.llm.base import Usage

        router = agent.collection_router
        if is_own(router.invoke, CollectionRouter.invoke):
            return None
        keywords: dict[str, object] = dict(ctx.store_kwargs)
        if ctx.authorized_collections is not None:
            keywords.setdefault("authorized_collection_set", set(ctx.authorized_collections))
        picked, tokens = await ctx.bounded(
            asyncio.to_thread(router.invoke, query=query, dim=agent.embedding_model.dimension, **keywords),
            "collection_routing",
        )
        if tokens:
            ctx.record("collection_routing", Usage(total_tokens=int(tokens)))
        chosen = agent._permitted(list(picked), ctx)
        if chosen:
            ctx.emit("collections", collections=chosen, routed=True)
            return chosen
        chosen = agent._permitted(router.all_collections, ctx)
        ctx.emit("collections", collections=chosen, routed=True, fallback="router_picked_none")
        return chosen


def _recorded(
    found: tuple[list[RetrievalResult], int, dict[str, object]], ctx: RunContext
) -> tuple[list[RetrievalResult], dict[str, object]]:
    """A hook's (results, tokens, metadata): tokens recorded as the retrieve step's; upstream's
    ChainOfRAG metadata (`intermediate_context`) becomes the findings its final answer reads."""
    from deepsearcher.llm.base import Usage

    results, tokens, metadata = found
    if tokens:
        ctx.record("retrieve", Usage(total_tokens=int(tokens)))
    metadata = dict(metadata or {})
    context = metadata.get("intermediate_context")
    if context and isinstance(context, list | tuple):
        ctx.extra["findings"] = [str(item) for item in context]
    return list(results), metadata


def _overrides_chain_steps(agent: RAGAgent) -> bool:
    from deepsearcher.agent.chain_of_rag import ChainOfRAG

    if not isinstance(agent, ChainOfRAG):
        return False
    return any(not is_own(getattr(agent, name), getattr(ChainOfRAG, name)) for name in CHAIN_STEPS)


def _chain_loop(
    agent: RAGAgent, query: str, ctx: RunContext, keywords: dict[str, object]
) -> tuple[list[RetrievalResult], int, dict[str, object]]:
    """Upstream ChainOfRAG's retrieval, over the step methods (a user's override or ours): follow-up
    question, its answer from a search, the passages supporting it, then (with early stopping)
    whether the facts so far answer the question."""
    from deepsearcher.types import deduplicate_results

    chain = cast("ChainOfRAG", agent)  # checked by _overrides_chain_steps
    max_iter = int(ctx.option("max_iter", chain.max_iter))
    early_stopping = bool(ctx.option("early_stopping", chain.early_stopping))
    supporting: list[RetrievalResult] = []
    findings: list[str] = []
    tokens = 0
    for hop in range(1, max_iter + 1):
        followup, used = chain._reflect_get_subquery(query, findings)
        tokens += used
        answer, results, used = chain._retrieve_and_answer(followup, **keywords)
        tokens += used
        kept, used = chain._get_supported_docs(results, followup, answer)
        tokens += used
        supporting.extend(kept)
        findings.append(f"Intermediate query{hop}: {followup}\nIntermediate answer{hop}: {answer}")
        if early_stopping:
            enough, used = chain._check_has_enough_info(query, findings)
            tokens += used
            if enough:
                break
    return deduplicate_results(supporting), tokens, {"intermediate_context": findings}


attach_shape("agent", UpstreamAgentShape())
