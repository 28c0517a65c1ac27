"""Test helpers shipped with the package: a scripted OpenAI-compatible LLM server."""

from deepsearcher.testing.scripted_llm import (
    Fail,
    RecordedRequest,
    Reply,
    Rule,
    ScriptedLLMServer,
    scripted_llm_fixture,
)

__all__ = [
    "Fail",
    "RecordedRequest",
    "Reply",
    "Rule",
    "ScriptedLLMServer",
    "scripted_llm_fixture",
]
