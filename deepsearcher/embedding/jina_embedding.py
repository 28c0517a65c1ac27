"""Jina AI embeddings, with separate query and passage tasks."""

from __future__ import annotations

from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import QUERY
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding

#: Models that take a `task` (v2 models reject it).
_TASK_MODELS = ("jina-embeddings-v3", "jina-embeddings-v4", "jina-clip-v2")


@register_provider("embedding", env_var="JINA_API_KEY")
class JinaEmbedding(OpenAIEmbedding):
    """https://api.jina.ai/v1/embeddings; key from $JINA_API_KEY.

    Queries are sent with task "retrieval.query", stored passages with
    "retrieval.passage" (v3/v4 models); `dimension` picks a shorter (Matryoshka) vector.
    """

    api_key_env: ClassVar[str | None] = "JINA_API_KEY"
    default_model: ClassVar[str] = "jina-embeddings-v3"
    default_base_url: ClassVar[str] = "https://api.jina.ai/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("JINA_BASE_URL",)
    known_dimensions: ClassVar[dict[str, int]] = {
        "jina-embeddings-v3": 1024,
        "jina-embeddings-v4": 2048,
        "jina-clip-v2": 1024,
        "jina-embeddings-v2-base-en": 768,
        "jina-embeddings-v2-base-zh": 768,
        "jina-embeddings-v2-base-de": 768,
        "jina-embeddings-v2-base-es": 768,
        "jina-embeddings-v2-base-code": 768,
        "jina-embeddings-v2-small-en": 512,
    }
    known_windows: ClassVar[dict[str, int]] = {
        "jina-embeddings-v3": 8192,
        "jina-embeddings-v2-base-en": 8192,
        "jina-embeddings-v2-base-zh": 8192,
        "jina-embeddings-v2-base-de": 8192,
        "jina-embeddings-v2-base-es": 8192,
        "jina-embeddings-v2-base-code": 8192,
        "jina-embeddings-v2-small-en": 8192,
    }
    max_batch: ClassVar[int] = 2048
    max_batch_chars: ClassVar[int | None] = 500_000

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        body: dict[str, object] = {
            "model": self.model,
            "input": texts,
            "embedding_type": "float",
        }
        if self.model.startswith(_TASK_MODELS):
            body["task"] = "retrieval.query" if kind == QUERY else "retrieval.passage"
        if self.requested_dimension:
            body["dimensions"] = self.requested_dimension
        body.update(self.options)
        return f"{self.base_url}/embeddings", body
