"""Online querying: DeepSearcher's `query`, `retrieve`, `naive_retrieve`, `naive_rag_query`."""

from __future__ import annotations

from deepsearcher import configuration
from deepsearcher.agent.retriever import Retriever
from deepsearcher.types import RetrievalResult


def naive_retrieve(query: str, collection: str | None = None, top_k: int = 10) -> list[RetrievalResult]:
    """Retrieval only (no LLM): the best `top_k` chunks of `collection` (default collection when None)."""
    configuration.ensure_initialized()
    vector_db = configuration.vector_db
    retriever = Retriever(configuration.embedding_model, vector_db)
    return retriever.search(query, [collection or vector_db.default_collection], top_k=top_k)
