"""Zhipu's GLM models (OpenAI-compatible API)."""

from __future__ import annotations

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI


@register_provider("llm", env_var="GLM_API_KEY")
class GLM(OpenAI):
    """Zhipu's GLM models (OpenAI-compatible API). Key: $GLM_API_KEY or config api_key; base_url defaults to https://open.bigmodel.cn/api/paas/v4."""

    default_model = "glm-4-plus"
    default_base_url = "https://open.bigmodel.cn/api/paas/v4"
    api_key_env = "GLM_API_KEY"
    base_url_env = ("GLM_BASE_URL",)
    requires_api_key = True
    supports_json_mode = True
