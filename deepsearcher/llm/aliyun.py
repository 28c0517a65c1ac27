"""Upstream DeepSearcher's module path for `Aliyun`, a row of llm/openai_presets.py here."""

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.llm.openai_presets import preset_named

Aliyun = preset_named("Aliyun")

__all__ = ["BaseLLM", "ChatResponse", "Aliyun"]
