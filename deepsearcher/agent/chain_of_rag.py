"""ChainOfRAG: answer multi-hop questions one follow-up question at a time."""

from __future__ import annotations

from typing import Any

from deepsearcher.agent import prompts
from deepsearcher.agent.base import AgentOutput, RAGAgent, describe_class
from deepsearcher.agent.context import RunContext
from deepsearcher.agent.options import ChainOptions
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.llm.base import BaseLLM
from deepsearcher.llm.parsing import parse_list, parse_yes_no
from deepsearcher.types import RetrievalResult, deduplicate_results
from deepsearcher.vector_db.base import BaseVectorDB


def _indices(text: str) -> list[int]:
    """Passage numbers from the LLM's list (items that are not numbers are ignored)."""
    numbers = []
    for item in parse_list(text):
        item = str(item).strip().strip("[]#")
        if item.lstrip("-").isdigit():
            numbers.append(int(item))
    return numbers


@register_provider("agent", "chain")
@describe_class(
    "This agent suits multi-hop factual questions whose answer needs a chain of facts (A leads to B "
    "leads to C): it asks one follow-up question at a time, answers it from the documents and uses "
    "that answer to ask the next."
)
class ChainOfRAG(RAGAgent):
    Options = ChainOptions
    max_iter: int
    early_stopping: bool
    iterative = True
    route_rank = 2
    label = "chain of RAG"

    def __init__(
        self,
        llm: BaseLLM,
        embedding_model: BaseEmbedding,
        vector_db: BaseVectorDB,
        max_iter: int | None = None,
        early_stopping: bool | None = None,
        top_k: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            llm, embedding_model, vector_db, max_iter=max_iter, early_stopping=early_stopping, top_k=top_k, **kwargs
        )

    async def _retrieve(self, query: str, ctx: RunContext, collections: list[str]) -> list[RetrievalResult]:
        max_iter = ctx.option("max_iter", self.max_iter)
        early_stopping = ctx.option("early_stopping", self.early_stopping)
        top_k = ctx.option("top_k", self.top_k)
        findings: list[str] = []
        supporting: list[RetrievalResult] = []
        retrieved: list[RetrievalResult] = []
        for hop in range(1, max_iter + 1):
            if hop > 1 and ctx.budget_exhausted():  # the first hop always runs: something to answer from
                break
            followup = await self._followup(query, findings, ctx)
            results = (
                await self.retriever.asearch(followup, collections, top_k=top_k, **ctx.store_kwargs)
                if collections
                else []
            )
            retrieved.extend(results)
            answer = await self._intermediate_answer(followup, results, ctx)
            kept = await self._supporting(followup, answer, results, ctx)
            supporting.extend(kept)
            findings.append(f"Follow-up question {hop}: {followup}\nAnswer {hop}: {answer}")
            ctx.emit(
                "search",
                iteration=hop,
                query=followup,
                collections=collections,
                retrieved=len(results),
                accepted=len(kept),
            )
            ctx.emit(
                "intermediate_answer",
                iteration=hop,
                query=followup,
                answer=answer,
                supporting=len(kept),
            )
            if early_stopping and hop < max_iter:
                if await self._enough(query, findings, ctx):
                    break
        ctx.extra["findings"] = findings
        return deduplicate_results(supporting) or self._fallback(retrieved, ctx, "supporting_docs")

    async def _followup(self, query: str, findings: list[str], ctx: RunContext) -> str:
        known = "\n".join(findings) or "(nothing yet)"
        message = {"role": "user", "content": prompts.FOLLOWUP_QUERY.format(query=query, context=known)}
        return (await ctx.chat(self.llm, [message], "followup_query")).strip()

    async def _intermediate_answer(self, followup: str, results: list[RetrievalResult], ctx: RunContext) -> str:
        passages = _numbered(results) or "(none)"
        message = {"role": "user", "content": prompts.INTERMEDIATE_ANSWER.format(query=followup, passages=passages)}
        return (await ctx.chat(self.llm, [message], "intermediate_answer")).strip()

    async def _supporting(
        self, followup: str, answer: str, results: list[RetrievalResult], ctx: RunContext
    ) -> list[RetrievalResult]:
        """The retrieved chunks the LLM says support the follow-up's answer."""
        if not results:
            return []
        prompt = prompts.SUPPORTING_DOCS.format(query=followup, answer=answer, passages=_numbered(results))
        chosen = await ctx.structured(self.llm, prompt, _indices, "supporting_docs", json_mode=True)
        return [results[i] for i in dict.fromkeys(chosen) if 0 <= i < len(results)]

    async def _enough(self, query: str, findings: list[str], ctx: RunContext) -> bool:
        prompt = prompts.ENOUGH_INFO.format(query=query, context="\n".join(findings))
        return bool(await ctx.structured(self.llm, prompt, parse_yes_no, "early_stopping"))

    # DeepSearcher's step methods: one step on its own, returning its value and the tokens used ----
    def _reflect_get_subquery(self, query: str, intermediate_context: list[str], **kwargs: Any) -> tuple[str, int]:
        return self._run_step(lambda ctx: self._followup(query, list(intermediate_context), ctx), **kwargs)

    def _retrieve_and_answer(self, query: str, **kwargs: Any) -> tuple[str, list[RetrievalResult], int]:
        """Route, search `query` and answer it from what was found: (answer, results, tokens)."""

        async def step(ctx: RunContext) -> tuple[str, list[RetrievalResult]]:
            collections = await self._collections(query, ctx, None)
            top_k = ctx.option("top_k", self.top_k)
            results = await self.retriever.asearch(query, collections, top_k=top_k, **ctx.store_kwargs)
            return await self._intermediate_answer(query, results, ctx), results

        (answer, results), tokens = self._run_step(step, **kwargs)
        return answer, results, tokens

    def _get_supported_docs(
        self, results: list[RetrievalResult], query: str, intermediate_answer: str, **kwargs: Any
    ) -> tuple[list[RetrievalResult], int]:
        return self._run_step(lambda ctx: self._supporting(query, intermediate_answer, list(results), ctx), **kwargs)

    def _check_has_enough_info(self, query: str, intermediate_contexts: list[str], **kwargs: Any) -> tuple[bool, int]:
        return self._run_step(lambda ctx: self._enough(query, list(intermediate_contexts), ctx), **kwargs)

    def _format_retrieved_results(self, retrieved_results: list[RetrievalResult]) -> str:
        """The chunks as the LLM reads them (wider windows unless `text_window_splitter` is off)."""
        return "\n".join(
            f"<Document {i}>\n{self._passage_text(r)}\n</Document {i}>" for i, r in enumerate(retrieved_results)
        )

    async def _execute(self, query: str, ctx: RunContext, collections: list[str] | None = None) -> AgentOutput:
        results = await self._gather(query, ctx, collections)
        findings = "\n\n".join(ctx.extra.get("findings", [])) or "(none)"
        answer, sources = await self._answer(query, results, ctx, template=prompts.CHAIN_FINAL, context=findings)
        return AgentOutput(answer=answer, sources=sources, results=results, agent=self.name)


def _numbered(results: list[RetrievalResult]) -> str:
    """The passages as the hop prompts show them: `[i] text`, numbered from 0."""
    return "\n\n".join(f"[{i}] {result.text}" for i, result in enumerate(results))
