"""Upstream DeepSearcher's module path for `PPIO`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

PPIO = preset_named("PPIO")

__all__ = ["BaseLLM", "ChatResponse", "PPIO"]
