"""Volcengine Ark's OpenAI-compatible embeddings API (Doubao models)."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding


@register_provider("embedding", env_var="VOLCENGINE_API_KEY")
class VolcengineEmbedding(OpenAIEmbedding):
    """Volcengine Ark (https://ark.cn-beijing.volces.com/api/v3); key from $VOLCENGINE_API_KEY.

    `model` is a Doubao embedding model or an Ark endpoint id (ep-...).
    """

    api_key_env: ClassVar[str | None] = "VOLCENGINE_API_KEY"
    api_key_fallback_env: ClassVar[tuple[str, ...]] = ("ARK_API_KEY",)
    default_model: ClassVar[str] = "doubao-embedding-large-text-240915"
    default_base_url: ClassVar[str] = "https://ark.cn-beijing.volces.com/api/v3"
    base_url_env: ClassVar[tuple[str, ...]] = ("VOLCENGINE_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "doubao-embedding-large-text-240915": 4096,
        "doubao-embedding-text-240715": 2560,
        "doubao-embedding-text-240515": 2048,
    }
    max_batch: ClassVar[int] = 256
    max_batch_chars: ClassVar[int | None] = None
