"""Volcengine Ark (ByteDance) OpenAI-compatible API; the model may be an endpoint id."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="VOLCENGINE_API_KEY")
class Volcengine(OpenAI):
    """Volcengine Ark (ByteDance) OpenAI-compatible API; the model may be an endpoint id.

    Key: $VOLCENGINE_API_KEY or config api_key; base_url defaults to https://ark.cn-beijing.volces.com/api/v3.
    """

    default_model = "deepseek-v3-250324"
    default_base_url = "https://ark.cn-beijing.volces.com/api/v3"
    api_key_env = "VOLCENGINE_API_KEY"
    base_url_env = ("VOLCENGINE_BASE_URL",)
    requires_api_key = True
    supports_json_mode = False
