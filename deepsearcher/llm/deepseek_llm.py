"""DeepSeek's API (deepseek-chat; deepseek-reasoner thinks before answering)."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="DEEPSEEK_API_KEY")
class DeepSeek(OpenAI):
    """DeepSeek's API (deepseek-chat; deepseek-reasoner thinks before answering).

    Key: $DEEPSEEK_API_KEY or config api_key; base_url defaults to https://api.deepseek.com.
    """

    default_model = "deepseek-chat"
    default_base_url = "https://api.deepseek.com"
    api_key_env = "DEEPSEEK_API_KEY"
    base_url_env = ("DEEPSEEK_BASE_URL",)
    requires_api_key = True
    supports_json_mode = True
