"""Upstream DeepSearcher's module path for `Bedrock` (defined in llm/bedrock_llm.py)."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.bedrock_llm import Bedrock

__all__ = ["BaseLLM", "ChatResponse", "Bedrock"]
