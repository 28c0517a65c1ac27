"""Any embedding model LiteLLM can reach ("openai/...", "cohere/...", "bedrock/...", ...)."""

from __future__ import annotations

from typing import Any, ClassVar

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import (
    BadResponse,
    RemoteEmbedding,
    classify_http,
    vector_of,
)
from deepsearcher.embedding.gemini_embedding import GeminiEmbedding
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding
from deepsearcher.embedding.voyage_embedding import VoyageEmbedding
from deepsearcher.transport.retry import Failure


def _classify(exc: BaseException) -> Failure:
    """LiteLLM's exceptions carry the provider's HTTP status (and often its response)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 400:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        return Failure.from_status(status, str(getattr(exc, "message", "") or exc), headers)
    name = type(exc).__name__
    if "Timeout" in name:
        return Failure("timeout", "timed out", True)
    if "APIConnectionError" in name:
        return Failure("connection", f"cannot connect ({exc})", True)
    return classify_http(exc)


def _item_vector(item: object) -> list[float]:
    value = item.get("embedding") if isinstance(item, dict) else getattr(item, "embedding", None)
    return vector_of(value)


@register_provider("embedding", extra="litellm", requires=("litellm",))
class LiteLLMEmbedding(RemoteEmbedding):
    """litellm.embedding with a provider-prefixed model ("openai/text-embedding-3-small",
    "voyage/voyage-3.5", "gemini/gemini-embedding-001", ...). LiteLLM reads each provider's
    own key variable; api_key (else $LITELLM_API_KEY) and base_url or api_base (else
    $LITELLM_API_BASE, a LiteLLM proxy) override it. Retries are ours, not LiteLLM's;
    drop_params=True drops a parameter the model does not take, as DeepSearcher did."""

    requires_api_key: ClassVar[bool] = False
    api_key_env: ClassVar[str | None] = "LITELLM_API_KEY"
    base_url_env: ClassVar[tuple[str, ...]] = ("LITELLM_API_BASE",)
    default_model: ClassVar[str] = "text-embedding-ada-002"  # DeepSearcher's default
    known_dimensions: ClassVar[dict[str, int]] = {
        **OpenAIEmbedding.known_dimensions,
        **VoyageEmbedding.known_dimensions,
        **GeminiEmbedding.known_dimensions,
    }
    max_batch: ClassVar[int] = 256

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        *,
        api_base: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._litellm = require("litellm", extra="litellm", feature="LiteLLMEmbedding")
        super().__init__(model, api_key, base_url or api_base, dimension, **kwargs)
        if self._dimension is None:
            self._dimension = self.known_dimensions.get(self.model.split("/", 1)[-1])

    def _embed_batch(self, texts: list[str], kind: str) -> list[list[float]]:
        kwargs: dict[str, object] = {
            "model": self.model,
            "input": texts,
            "timeout": self.policy.timeout,
            "num_retries": 0,
            "drop_params": True,
            **self.options,
        }
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self.requested_dimension:
            kwargs["dimensions"] = self.requested_dimension

        def attempt() -> list[list[float]]:
            response = self._litellm.embedding(**kwargs)
            data = response.get("data") if isinstance(response, dict) else getattr(response, "data", None)
            if not isinstance(data, list) or len(data) != len(texts):
                raise BadResponse(f"expected {len(texts)} embeddings")
            return [_item_vector(item) for item in data]

        return self._with_retries(attempt, _classify)

    @property
    def api_base(self) -> str | None:
        """DeepSearcher's name of `base_url` (None when LiteLLM picks the provider's own)."""
        return self.base_url or None

    @property
    def dim(self) -> int:
        """DeepSearcher's name of `dimension`."""
        return self.dimension
