"""Upstream DeepSearcher's module path for `XAI`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

XAI = preset_named("XAI")

__all__ = ["BaseLLM", "ChatResponse", "XAI"]
