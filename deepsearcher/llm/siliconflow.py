"""Upstream DeepSearcher's module path for `SiliconFlow`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

SiliconFlow = preset_named("SiliconFlow")

__all__ = ["BaseLLM", "ChatResponse", "SiliconFlow"]
