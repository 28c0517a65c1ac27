"""DeepSearcher's `MilvusEmbedding` (pymilvus's model library), mapped onto what runs here.

DeepSearcher's default, pymilvus's `DefaultEmbeddingFunction` (paraphrase-albert, 768
dims), is downloaded from the Hugging Face hub on first use; this project works offline,
so "default" means the bundled all-MiniLM-L6-v2 instead (384 dims), said once in the log.
`BAAI/...` and other sentence-transformers names load locally (a model that is not on
this machine fails with the "no download" message instead of hanging); `jina-*` models
go to Jina's API (key from $JINAAI_API_KEY, as DeepSearcher, or $JINA_API_KEY).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.base import BaseEmbedding, DelegatingEmbedding

logger = logging.getLogger(__name__)

DEFAULT_NAMES = frozenset(
    {
        "default",
        "GPTCache/paraphrase-albert-onnx",
        "GPTCache/paraphrase-albert-small-v2",
    }
)


def _inner(model: str | None, kwargs: dict[str, Any]) -> BaseEmbedding:
    if not model or model in DEFAULT_NAMES:
        from deepsearcher.embedding.minilm_embedding import (
            MODEL_NAME as BUNDLED_MINILM,
        )
        from deepsearcher.embedding.minilm_embedding import (
            MiniLMEmbedding,
        )

        logger.warning(
            "MilvusEmbedding model '%s' (pymilvus's paraphrase-albert, 768 dims) runs here as the bundled %s "
            "(384 dims), which needs no download; collections built with the old model must be reloaded.",
            model or "default",
            BUNDLED_MINILM,
        )
        return MiniLMEmbedding(**kwargs)
    if model.startswith("jina-"):
        from deepsearcher.embedding.jina_embedding import JinaEmbedding

        kwargs.setdefault("api_key", os.environ.get("JINAAI_API_KEY") or None)
        return JinaEmbedding(model=model, **kwargs)
    from deepsearcher.embedding.sentence_transformer_embedding import (
        SentenceTransformerEmbedding,
    )

    return SentenceTransformerEmbedding(model=model, **kwargs)


@register_provider("embedding", extra="local", requires=("sentence_transformers",))
class MilvusEmbedding(DelegatingEmbedding):
    """Config: model ("default" → bundled all-MiniLM-L6-v2; BAAI/bge-*; jina-embeddings-v3, ...),
    or DeepSearcher's `model_name`; other keys go to the model that serves it."""

    def __init__(self, model: str | None = None, **kwargs: Any) -> None:
        if "model_name" in kwargs and (not model or model == "default"):
            model = kwargs.pop("model_name")
        self.inner = _inner(model, kwargs)
        self.model_name = self.inner.model_name

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"MilvusEmbedding({self.inner!r})"
