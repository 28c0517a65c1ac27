"""Novita AI's OpenAI-compatible embeddings API."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding


@register_provider("embedding", env_var="NOVITA_API_KEY")
class NovitaEmbedding(OpenAIEmbedding):
    """Novita AI (https://api.novita.ai/v3/openai); key from $NOVITA_API_KEY."""

    api_key_env: ClassVar[str | None] = "NOVITA_API_KEY"
    default_model: ClassVar[str] = "baai/bge-m3"
    default_base_url: ClassVar[str] = "https://api.novita.ai/v3/openai"
    base_url_env: ClassVar[tuple[str, ...]] = ("NOVITA_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "baai/bge-m3": 1024,
        "qwen/qwen3-embedding-8b": 4096,
        "qwen/qwen3-embedding-0.6b": 1024,
    }
    max_batch: ClassVar[int] = 32  # conservative: Novita documents no larger batch
    max_batch_chars: ClassVar[int | None] = None
