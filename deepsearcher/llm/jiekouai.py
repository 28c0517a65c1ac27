"""Upstream DeepSearcher's module path for `JiekouAI`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

JiekouAI = preset_named("JiekouAI")

__all__ = ["BaseLLM", "ChatResponse", "JiekouAI"]
