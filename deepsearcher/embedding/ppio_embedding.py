"""PPIO's OpenAI-compatible embeddings API (DeepSearcher's `PPIOEmbedding`)."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding


@register_provider("embedding", env_var="PPIO_API_KEY")
class PPIOEmbedding(OpenAIEmbedding):
    """PPIO (https://api.ppinfra.com/v3/openai); key from $PPIO_API_KEY."""

    api_key_env: ClassVar[str | None] = "PPIO_API_KEY"
    default_model: ClassVar[str] = "baai/bge-m3"
    default_base_url: ClassVar[str] = "https://api.ppinfra.com/v3/openai"
    base_url_env: ClassVar[tuple[str, ...]] = ("PPIO_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {"baai/bge-m3": 1024}
    max_batch: ClassVar[int] = 32  # what DeepSearcher sends per request; PPIO documents no limit
    max_batch_chars: ClassVar[int | None] = None
