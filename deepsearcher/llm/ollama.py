"""Upstream DeepSearcher's module path for `Ollama` (defined in llm/ollama_llm.py)."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.ollama_llm import Ollama

__all__ = ["BaseLLM", "ChatResponse", "Ollama"]
