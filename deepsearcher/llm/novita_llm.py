"""Novita AI's OpenAI-compatible API."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="NOVITA_API_KEY")
class Novita(OpenAI):
    """Novita AI's OpenAI-compatible API. Key: $NOVITA_API_KEY or config api_key; base_url defaults to https://api.novita.ai/v3/openai."""

    default_model = "deepseek/deepseek-v3-0324"
    default_base_url = "https://api.novita.ai/v3/openai"
    api_key_env = "NOVITA_API_KEY"
    base_url_env = ("NOVITA_BASE_URL",)
    requires_api_key = True
    supports_json_mode = False
