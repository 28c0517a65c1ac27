"""Any OpenAI-compatible server: vLLM, LM Studio, llama.cpp's llama-server, LocalAI, ..."""

from __future__ import annotations

from typing import Any

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI
from deepsearcher.types.errors import ConfigurationError


@register_provider("llm", aliases=("OpenAICompatibleLLM",))
class OpenAICompatible(OpenAI):
    """A generic OpenAI-compatible server. base_url is required; the key is optional
    (config api_key, else $OPENAI_API_KEY, else none). JSON mode is off unless
    `supports_json_mode: true` (not every server accepts response_format)."""

    default_model = "default"
    default_base_url = None
    api_key_env = "OPENAI_API_KEY"
    base_url_env = ()
    requires_api_key = False
    supports_json_mode = False

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not base_url:
            raise ConfigurationError(
                "OpenAICompatible needs provide_settings.llm.config.base_url, the server's OpenAI-style "
                "URL, e.g. http://localhost:8000/v1 (vLLM), http://localhost:1234/v1 (LM Studio), "
                "http://localhost:8080/v1 (llama.cpp)."
            )
        super().__init__(model, api_key, base_url, **kwargs)
