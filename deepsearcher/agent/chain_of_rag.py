"""ChainOfRAG: answer multi-hop questions one follow-up question at a time."""

from __future__ import annotations

from typing import Any

from deepsearcher.agent import prompts
from deepsearcher.agent.base import AgentOutput, RAGAgent, describe_class
from deepsearcher.agent.context import RunContext
from deepsearcher.agent.options import ChainOptions
from deepsearcher.config.registry import register_provider
from deepsearcher.llm.parsing import parse_list, parse_yes_no
from deepsearcher.types import RetrievalResult, deduplicate_results


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
        llm: Any,
        embedding_model: Any,
        vector_db: Any,
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
            known = "\n".join(findings) or "(nothing yet)"
            followup = (
                await ctx.chat(
                    self.llm,
                    [
                        {
                            "role": "user",
                            "content": prompts.FOLLOWUP_QUERY.format(query=query, context=known),
                        }
                    ],
                    "followup_query",
                )
            ).strip()
            results = (
                await self.retriever.asearch(followup, collections, top_k=top_k, **ctx.store_kwargs)
                if collections
                else []
            )
            retrieved.extend(results)
            passages = "\n\n".join(f"[{i}] {result.text}" for i, result in enumerate(results))
            answer = (
                await ctx.chat(
                    self.llm,
                    [
                        {
                            "role": "user",
                            "content": prompts.INTERMEDIATE_ANSWER.format(
                                query=followup, passages=passages or "(none)"
                            ),
                        }
                    ],
                    "intermediate_answer",
                )
            ).strip()
            chosen = (
                await ctx.structured(
                    self.llm,
                    prompts.SUPPORTING_DOCS.format(query=followup, answer=answer, passages=passages or "(none)"),
                    _indices,
                    "supporting_docs",
                    json_mode=True,
                )
                if results
                else []
            )
            kept = [results[i] for i in dict.fromkeys(chosen) if 0 <= i < len(results)]
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
                enough = await ctx.structured(
                    self.llm,
                    prompts.ENOUGH_INFO.format(query=query, context="\n".join(findings)),
                    parse_yes_no,
                    "early_stopping",
                )
                if enough:
                    break
        ctx.extra["findings"] = findings
        return deduplicate_results(supporting) or self._fallback(retrieved, ctx, "supporting_docs")

    async def _execute(self, query: str, ctx: RunContext, collections: list[str] | None = None) -> AgentOutput:
        results = await self._gather(query, ctx, collections)
        findings = "\n\n".join(ctx.extra.get("findings", [])) or "(none)"
        answer, sources = await self._answer(query, results, ctx, template=prompts.CHAIN_FINAL, context=findings)
        return AgentOutput(answer=answer, sources=sources, results=results, agent=self.name)
