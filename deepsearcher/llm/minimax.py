"""Upstream DeepSearcher's module path for `MiniMax`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

MiniMax = preset_named("MiniMax")

__all__ = ["BaseLLM", "ChatResponse", "MiniMax"]
