"""Jiekou.AI's OpenAI-compatible API."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="JIEKOU_API_KEY", aliases=("Jiekou.AI", "Jiekou"))
class JiekouAI(OpenAI):
    """Jiekou.AI's OpenAI-compatible API. Key: $JIEKOU_API_KEY or config api_key; base_url defaults to https://api.jiekou.ai/openai/v1."""

    default_model = "claude-sonnet-4-5-20250929"
    default_base_url = "https://api.jiekou.ai/openai/v1"
    api_key_env = "JIEKOU_API_KEY"
    base_url_env = ("JIEKOU_BASE_URL",)
    requires_api_key = True
    supports_json_mode = False
