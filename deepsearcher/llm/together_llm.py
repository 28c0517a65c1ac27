"""Together AI's OpenAI-compatible API."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="TOGETHER_API_KEY")
class TogetherAI(OpenAI):
    """Together AI's OpenAI-compatible API. Key: $TOGETHER_API_KEY or config api_key; base_url defaults to https://api.together.xyz/v1."""

    default_model = "deepseek-ai/DeepSeek-V3"
    default_base_url = "https://api.together.xyz/v1"
    api_key_env = "TOGETHER_API_KEY"
    base_url_env = ("TOGETHER_BASE_URL",)
    requires_api_key = True
    supports_json_mode = True
