"""Jiekou.AI's OpenAI-compatible embeddings API."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding


@register_provider("embedding", env_var="JIEKOU_API_KEY", aliases=("Jiekou.AIEmbedding",))
class JiekouAIEmbedding(OpenAIEmbedding):
    """Jiekou.AI (https://api.jiekou.ai/openai/v1); key from $JIEKOU_API_KEY."""

    api_key_env: ClassVar[str | None] = "JIEKOU_API_KEY"
    default_model: ClassVar[str] = "baai/bge-m3"  # DeepSearcher's default
    default_base_url: ClassVar[str] = "https://api.jiekou.ai/openai/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("JIEKOU_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "qwen/qwen3-embedding-8b": 4096,
        "qwen/qwen3-embedding-0.6b": 1024,
        "baai/bge-m3": 1024,
    }
    max_batch: ClassVar[int] = 32
    max_batch_chars: ClassVar[int | None] = None
