"""SiliconFlow's OpenAI-compatible embeddings API (BGE, Qwen3-Embedding, ...)."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding


@register_provider("embedding", env_var="SILICONFLOW_API_KEY")
class SiliconflowEmbedding(OpenAIEmbedding):
    """SiliconFlow (https://api.siliconflow.cn/v1); key from $SILICONFLOW_API_KEY.

    `dimension` is honoured by the Qwen3-Embedding models only.
    """

    api_key_env: ClassVar[str | None] = "SILICONFLOW_API_KEY"
    default_model: ClassVar[str] = "BAAI/bge-m3"
    default_base_url: ClassVar[str] = "https://api.siliconflow.cn/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("SILICONFLOW_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "BAAI/bge-m3": 1024,
        "Pro/BAAI/bge-m3": 1024,
        "BAAI/bge-large-zh-v1.5": 1024,
        "BAAI/bge-large-en-v1.5": 1024,
        "netease-youdao/bce-embedding-base_v1": 768,
        "Qwen/Qwen3-Embedding-8B": 4096,
        "Qwen/Qwen3-Embedding-4B": 2560,
        "Qwen/Qwen3-Embedding-0.6B": 1024,
    }
    known_windows: ClassVar[dict[str, int]] = {
        "BAAI/bge-m3": 8192,
        "Pro/BAAI/bge-m3": 8192,
        "BAAI/bge-large-zh-v1.5": 512,
        "BAAI/bge-large-en-v1.5": 512,
        "netease-youdao/bce-embedding-base_v1": 512,
    }
    max_batch: ClassVar[int] = 32  # the documented maximum length of `input`
    max_batch_chars: ClassVar[int | None] = None
