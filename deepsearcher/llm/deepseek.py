"""Upstream DeepSearcher's module path for `DeepSeek`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

DeepSeek = preset_named("DeepSeek")

__all__ = ["BaseLLM", "ChatResponse", "DeepSeek"]
