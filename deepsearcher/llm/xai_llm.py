"""xAI's Grok models (OpenAI-compatible API)."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="XAI_API_KEY")
class XAI(OpenAI):
    """xAI's Grok models (OpenAI-compatible API). Key: $XAI_API_KEY or config api_key; base_url defaults to https://api.x.ai/v1."""

    default_model = "grok-3-mini"
    default_base_url = "https://api.x.ai/v1"
    api_key_env = "XAI_API_KEY"
    base_url_env = ("XAI_BASE_URL",)
    requires_api_key = True
    supports_json_mode = True
