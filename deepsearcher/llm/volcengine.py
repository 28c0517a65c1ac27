"""Upstream DeepSearcher's module path for `Volcengine`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

Volcengine = preset_named("Volcengine")

__all__ = ["BaseLLM", "ChatResponse", "Volcengine"]
