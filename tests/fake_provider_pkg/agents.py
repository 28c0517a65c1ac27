"""A plugin agent shipped outside DeepSearcher: one file, registered through an entry point."""

from __future__ import annotations

from deepsearcher.agent.base import AgentOutput, RAGAgent
from deepsearcher.agent.context import RunContext
from deepsearcher.types import RetrievalResult


class EchoAgent(RAGAgent):
    """Answers with the best passage as it is, without asking the LLM."""

    __description__ = "Quotes the single best passage."
    label = "echo the best passage"

    async def _retrieve(self, query: str, ctx: RunContext, collections: list[str]) -> list[RetrievalResult]:
        return await self.retriever.asearch(query, collections, top_k=1) if collections else []

    async def _execute(self, query: str, ctx: RunContext, collections: list[str] | None = None) -> AgentOutput:
        results = await self._retrieve(query, ctx, await self._collections(query, ctx, collections))
        answer = results[0].text.strip() if results else "nothing found"
        return AgentOutput(answer=answer, results=results, agent=self.name)
