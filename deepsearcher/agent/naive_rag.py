"""NaiveRAG: one retrieval, one answer — the fast baseline."""

from __future__ import annotations

from typing import Any

from deepsearcher.agent.base import RAGAgent, describe_class
from deepsearcher.agent.context import RunContext
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.graph import in_search_order
from deepsearcher.llm.base import BaseLLM
from deepsearcher.types import RetrievalResult
from deepsearcher.vector_db.base import BaseVectorDB


@register_provider("agent", "naive")
@describe_class(
    "This agent retrieves once and answers directly. It suits simple factual questions whose answer "
    "sits in one place of the documents."
)
class NaiveRAG(RAGAgent):
    label = "naive RAG"

    def __init__(
        self,
        llm: BaseLLM,
        embedding_model: BaseEmbedding,
        vector_db: BaseVectorDB,
        top_k: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(llm, embedding_model, vector_db, top_k=top_k, **kwargs)

    async def _retrieve(self, query: str, ctx: RunContext, collections: list[str]) -> list[RetrievalResult]:
        top_k = ctx.option("top_k", self.top_k)
        results = (
            await self.retriever.asearch(query, collections, top_k=top_k, **ctx.store_kwargs) if collections else []
        )
        ctx.emit(
            "search",
            query=query,
            collections=collections,
            retrieved=len(results),
            accepted=len(results),
        )
        return in_search_order(results[:top_k])  # which chunks: links; the order read: similarity
