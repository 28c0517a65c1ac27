"""Upstream DeepSearcher's module path for `Gemini` (defined in llm/gemini_llm.py)."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.gemini_llm import Gemini

__all__ = ["BaseLLM", "ChatResponse", "Gemini"]
