"""Upstream DeepSearcher's module path for `GLM`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

GLM = preset_named("GLM")

__all__ = ["BaseLLM", "ChatResponse", "GLM"]
