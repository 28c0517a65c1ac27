"""Alibaba Cloud DashScope (Qwen) in OpenAI-compatible mode."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="DASHSCOPE_API_KEY")
class Aliyun(OpenAI):
    """Alibaba Cloud DashScope (Qwen) in OpenAI-compatible mode.

    Key: $DASHSCOPE_API_KEY or config api_key; base_url defaults to https://dashscope.aliyuncs.com/compatible-mode/v1.
    """

    default_model = "qwen-plus"
    default_base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
    api_key_env = "DASHSCOPE_API_KEY"
    base_url_env = ("DASHSCOPE_BASE_URL",)
    requires_api_key = True
    supports_json_mode = True
