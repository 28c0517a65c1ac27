"""Zhipu AI's (GLM, bigmodel.cn) OpenAI-compatible embeddings API."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding


@register_provider("embedding", env_var="GLM_API_KEY")
class GLMEmbedding(OpenAIEmbedding):
    """Zhipu GLM (https://open.bigmodel.cn/api/paas/v4); key from $GLM_API_KEY.

    Needs no SDK (DeepSearcher used `zhipuai`); `dimension` picks embedding-3's output size.
    """

    api_key_env: ClassVar[str | None] = "GLM_API_KEY"
    api_key_fallback_env: ClassVar[tuple[str, ...]] = ("ZHIPUAI_API_KEY",)
    default_model: ClassVar[str] = "embedding-3"
    default_base_url: ClassVar[str] = "https://open.bigmodel.cn/api/paas/v4"
    base_url_env: ClassVar[tuple[str, ...]] = ("GLM_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "embedding-3": 2048,
        "embedding-2": 1024,
    }
    max_batch: ClassVar[int] = 64  # the documented maximum number of inputs
    max_batch_chars: ClassVar[int | None] = None
