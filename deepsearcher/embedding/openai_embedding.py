"""OpenAI embeddings (and Azure OpenAI deployments) over the REST API."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import RemoteEmbedding
from deepsearcher.types import ConfigurationError

#: Models whose output size cannot be chosen.
_FIXED_SIZE = frozenset({"text-embedding-ada-002"})
DEFAULT_AZURE_API_VERSION = "2024-10-21"


@register_provider("embedding", env_var="OPENAI_API_KEY")
class OpenAIEmbedding(RemoteEmbedding):
    """OpenAI's /embeddings endpoint, or any OpenAI-compatible server via `base_url`.

    Config: model (text-embedding-3-small, text-embedding-3-large, text-embedding-ada-002,
    or a model of the server at base_url), dimension (text-embedding-3 models: a shorter
    vector), api_key (else $OPENAI_API_KEY), base_url (else $OPENAI_BASE_URL).
    Azure OpenAI: azure_endpoint (else $AZURE_OPENAI_ENDPOINT), deployment (default: the
    model name), api_version; the key comes from $AZURE_OPENAI_API_KEY (or $AZURE_OPENAI_KEY).
    """

    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    default_model: ClassVar[str] = "text-embedding-3-small"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("OPENAI_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }
    known_windows: ClassVar[dict[str, int]] = {  # "max input 8,191 tokens" (a longer input is refused)
        "text-embedding-3-small": 8191,
        "text-embedding-3-large": 8191,
        "text-embedding-ada-002": 8191,
    }
    max_batch: ClassVar[int] = 2048  # inputs per request
    max_batch_chars: ClassVar[int | None] = 800_000  # ~ the 300k-token request cap

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        *,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        deployment: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.azure_endpoint = (azure_endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT") or "").rstrip("/") or None
        if self.azure_endpoint:
            # instance attribute, read by RemoteEmbedding.__init__: Azure keys live in another variable
            self.api_key_env = "AZURE_OPENAI_API_KEY"  # type: ignore[misc]
            self.api_key_fallback_env = ("AZURE_OPENAI_KEY",)  # type: ignore[misc]  # DeepSearcher's name
            self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
            base_url = base_url or self.azure_endpoint
        model = model or deployment or kwargs.get("model_name") or self.default_model
        if dimension and model in _FIXED_SIZE:
            raise ConfigurationError(
                f"{model} always returns {self.known_dimensions[model]} dimensions; remove "
                "provide_settings.embedding.config.dimension or use a text-embedding-3 model."
            )
        super().__init__(model, api_key, base_url, dimension, **kwargs)
        self.deployment = deployment or self.model

    def _url(self) -> str:
        if self.azure_endpoint:
            return f"{self.base_url}/openai/deployments/{self.deployment}/embeddings?api-version={self.api_version}"
        return f"{self.base_url}/embeddings"

    def _headers(self) -> dict[str, str]:
        if self.azure_endpoint:
            return {"api-key": self.api_key or "", **self.extra_headers}
        return super()._headers()

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        body: dict[str, object] = {
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
            **self.options,
        }
        if self.requested_dimension:
            body["dimensions"] = self.requested_dimension
        return self._url(), body
