"""Research agents and the routers that pick among agents and collections."""

from __future__ import annotations

from typing import Any

from deepsearcher.agent import _upstream  # noqa: F401 - attaches upstream's agent hooks (the one place; cheap)

_LAZY = {
    "BaseAgent": "deepsearcher.agent.base",
    "RAGAgent": "deepsearcher.agent.base",
    "describe_class": "deepsearcher.agent.base",
    "DeepSearch": "deepsearcher.agent.deep_search",
    "ChainOfRAG": "deepsearcher.agent.chain_of_rag",
    "NaiveRAG": "deepsearcher.agent.naive_rag",
    "RAGRouter": "deepsearcher.agent.rag_router",
    "CollectionRouter": "deepsearcher.agent.collection_router",
    "Retriever": "deepsearcher.agent.retriever",
}


def __getattr__(name: str) -> Any:
    """Import agents on first use: retrieval-only commands should not pay for the LLM stack."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'deepsearcher.agent' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = list(_LAZY)
