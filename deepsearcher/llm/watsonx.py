"""Upstream DeepSearcher's module path for `WatsonX` (defined in llm/watsonx_llm.py)."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.watsonx_llm import WatsonX

__all__ = ["BaseLLM", "ChatResponse", "WatsonX"]
