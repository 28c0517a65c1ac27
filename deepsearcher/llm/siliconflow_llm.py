"""SiliconFlow's OpenAI-compatible API."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="SILICONFLOW_API_KEY")
class SiliconFlow(OpenAI):
    """SiliconFlow's OpenAI-compatible API. Key: $SILICONFLOW_API_KEY or config api_key; base_url defaults to https://api.siliconflow.cn/v1."""

    default_model = "deepseek-ai/DeepSeek-V3"
    default_base_url = "https://api.siliconflow.cn/v1"
    api_key_env = "SILICONFLOW_API_KEY"
    base_url_env = ("SILICONFLOW_BASE_URL",)
    requires_api_key = True
    supports_json_mode = False
