"""Qdrant's FastEmbed: small ONNX models on the CPU, no torch."""

from __future__ import annotations

import logging
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import EmbeddingError
from deepsearcher.embedding.base import BaseEmbedding

DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"


@register_provider("embedding", extra="fastembed", requires=("fastembed",))
class FastEmbedEmbedding(BaseEmbedding):
    """A FastEmbed model (default BAAI/bge-small-en-v1.5, 384 dimensions).

    FastEmbed downloads a model on first use into cache_dir; without network the model
    must already be there (set local_files_only: true to never try the network).
    Queries and passages go through FastEmbed's query_embed / passage_embed, which add the
    prefixes the model was trained with.
    """

    runs_locally = True

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        cache_dir: str | None = None,
        threads: int | None = None,
        batch_size: int = 256,
        local_files_only: bool = False,
        **kwargs: Any,
    ) -> None:
        fastembed = require("fastembed", extra="fastembed", feature="FastEmbedEmbedding")
        self.model_name = model
        self.batch_size = batch_size
        if local_files_only:
            kwargs["local_files_only"] = True
        try:
            self._model = fastembed.TextEmbedding(model_name=model, cache_dir=cache_dir, threads=threads, **kwargs)
        except (ValueError, OSError, RuntimeError) as exc:
            where = cache_dir or "FastEmbed's cache directory"
            raise EmbeddingError(
                type(self).__name__,
                model,
                None,
                f"cannot load the model: it is not in {where} and could not be downloaded "
                f"({' '.join(str(exc).split())})",
                hint="Run once with network access to download it, or set cache_dir to a folder that holds the model",
            ) from exc
        self._dimension = _known_dimension(fastembed, model)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [vector.tolist() for vector in self._model.passage_embed(texts, batch_size=self.batch_size)]

    def embed_query(self, text: str) -> list[float]:
        return next(iter(self._model.query_embed([text]))).tolist()

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embed_query("dimension probe"))
        return self._dimension


def _known_dimension(fastembed: Any, model: str) -> int | None:
    """The model's size from FastEmbed's own catalogue (no inference needed)."""
    try:
        for description in fastembed.TextEmbedding.list_supported_models():
            if str(description.get("model", "")).lower() == model.lower():
                return int(description["dim"])
    except Exception:  # an older or newer catalogue format: fall back to a probe
        logging.getLogger(__name__).debug("FastEmbed catalogue lookup failed", exc_info=True)
    return None
