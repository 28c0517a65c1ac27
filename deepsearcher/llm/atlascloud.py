"""Upstream DeepSearcher's module path for `AtlasCloud`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

AtlasCloud = preset_named("AtlasCloud")

__all__ = ["BaseLLM", "ChatResponse", "AtlasCloud"]
