"""Upstream DeepSearcher's module path for `Novita`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

Novita = preset_named("Novita")

__all__ = ["BaseLLM", "ChatResponse", "Novita"]
