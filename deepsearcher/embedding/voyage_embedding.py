"""Voyage AI embeddings over the REST API (no SDK needed)."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import RemoteEmbedding


@register_provider("embedding", env_var="VOYAGE_API_KEY")
class VoyageEmbedding(RemoteEmbedding):
    """https://api.voyageai.com/v1/embeddings; key from $VOYAGE_API_KEY.

    Queries and documents are sent with input_type "query" / "document"; `dimension`
    sets output_dimension on the models that support it (voyage-3.5, voyage-3-large, ...).
    """

    api_key_env: ClassVar[str | None] = "VOYAGE_API_KEY"
    default_model: ClassVar[str] = "voyage-3.5"
    default_base_url: ClassVar[str] = "https://api.voyageai.com/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("VOYAGE_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "voyage-3.5": 1024,
        "voyage-3.5-lite": 1024,
        "voyage-3-large": 1024,
        "voyage-3": 1024,
        "voyage-3-lite": 512,
        "voyage-code-3": 1024,
        "voyage-finance-2": 1024,
        "voyage-law-2": 1024,
        "voyage-multilingual-2": 1024,
        "voyage-2": 1024,
        "voyage-large-2": 1536,
        "voyage-code-2": 1536,
    }
    known_windows: ClassVar[dict[str, int]] = {  # context length; `truncation: true` cuts past it
        "voyage-3.5": 32000,
        "voyage-3.5-lite": 32000,
        "voyage-3-large": 32000,
        "voyage-3": 32000,
        "voyage-3-lite": 32000,
        "voyage-code-3": 32000,
        "voyage-2": 4000,
    }
    max_batch: ClassVar[int] = 1000  # the documented maximum length of `input`
    max_batch_chars: ClassVar[int | None] = 300_000  # stays under the 120K-token cap of the large models

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        body: dict[str, object] = {
            "model": self.model,
            "input": texts,
            "input_type": kind,
            "truncation": True,
        }
        if self.requested_dimension:
            body["output_dimension"] = self.requested_dimension
        body.update(self.options)
        return f"{self.base_url}/embeddings", body
