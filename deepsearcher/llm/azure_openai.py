"""Upstream DeepSearcher's module path for `AzureOpenAI` (defined in llm/azure_openai_llm.py)."""

from deepsearcher.llm.azure_openai_llm import AzureOpenAI
from deepsearcher.llm.base import BaseLLM, ChatResponse

__all__ = ["BaseLLM", "ChatResponse", "AzureOpenAI"]
