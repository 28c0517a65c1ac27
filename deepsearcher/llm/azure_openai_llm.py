"""Azure OpenAI deployments through the official SDK's AsyncAzureOpenAI."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI
from deepsearcher.types.errors import ConfigurationError

if TYPE_CHECKING:
    from openai import AsyncAzureOpenAI

DEFAULT_API_VERSION = "2024-10-21"


@register_provider("llm", env_var="AZURE_OPENAI_API_KEY")
class AzureOpenAI(OpenAI):
    """Azure OpenAI. Config: model (the deployment name; also `deployment`),
    azure_endpoint (or `endpoint`; else $AZURE_OPENAI_ENDPOINT), api_version (else
    $OPENAI_API_VERSION, else 2024-10-21), api_key (else $AZURE_OPENAI_API_KEY, else
    $AZURE_OPENAI_KEY, DeepSearcher's name for it)."""

    default_model = "gpt-4o-mini"
    api_key_env = "AZURE_OPENAI_API_KEY"
    api_key_fallback_env = ("AZURE_OPENAI_KEY",)
    base_url_env = ()
    requires_api_key = True
    supports_json_mode = True

    def __init__(
        self,
        model: str | None = None,
        azure_endpoint: str | None = None,
        api_key: str | None = None,
        api_version: str | None = None,
        *,
        endpoint: str | None = None,
        deployment: str | None = None,
        base_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        endpoint = azure_endpoint or endpoint or base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise ConfigurationError(
                "AzureOpenAI needs the resource endpoint: set AZURE_OPENAI_ENDPOINT or "
                "provide_settings.llm.config.azure_endpoint (https://<resource>.openai.azure.com)."
            )
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or DEFAULT_API_VERSION
        super().__init__(deployment or model, api_key, endpoint, **kwargs)

    def _make_client(self) -> AsyncAzureOpenAI:
        return self._sdk.AsyncAzureOpenAI(
            api_key=self._api_key,
            azure_endpoint=self.base_url,
            api_version=self.api_version,
            max_retries=0,
            timeout=self.timeout + 5,
            **self._client_options,
        )
