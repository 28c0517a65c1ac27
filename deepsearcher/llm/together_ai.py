"""Upstream DeepSearcher's module path for `TogetherAI`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

TogetherAI = preset_named("TogetherAI")

__all__ = ["BaseLLM", "ChatResponse", "TogetherAI"]
