"""Qdrant's FastEmbed: small ONNX models on the CPU, no torch.

FastEmbed's tokenizer cuts every text at the model's window (512 tokens for BGE) and drops the
rest without a word. Here the model declares that window (`window_tokens`, read from FastEmbed's
own tokenizer), so the default chunk size fits it, and a text that still overflows is embedded
as token windows cut between words, its vector the token-weighted mean of theirs (`_windows`,
as the bundled model does). Where a FastEmbed version hides its tokenizer, a warning names the
model and the characters it will not read.
"""

from __future__ import annotations

import logging
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._http import EmbeddingError
from deepsearcher.embedding._windows import pool_windows, token_windows
from deepsearcher.embedding.base import UNDECLARED_CHUNK_SIZE, BaseEmbedding, chunk_size_for_window

logger = logging.getLogger(__name__)

#: Tokens of the smallest window among FastEmbed's text models (MiniLM's), for the warning
#: given when a FastEmbed version hides the tokenizer that would tell the real one.
_SMALLEST_WINDOW = 256

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
        self._tokenizer = _tokenizer_of(self._model)
        self.window_tokens = _truncation_of(self._tokenizer)
        self._warned = False

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self._tokenizer is None or not self.window_tokens:
            self._warn_cut(texts)
            return self._passages(texts)
        special = self._tokenizer.num_special_tokens_to_add(False)
        owners: list[int] = []
        pieces: list[tuple[str, int]] = []
        for index, encoding in enumerate(self._tokenizer.encode_batch(texts)):
            windows = [encoding, *encoding.overflowing]
            offsets = [span for window in windows for span in window.offsets]
            parts = token_windows(texts[index], offsets, self.window_tokens - special) if len(windows) > 1 else []
            parts = parts or [(texts[index], max(1, len(encoding.ids)))]
            owners.extend([index] * len(parts))
            pieces.extend(parts)
        vectors = self._passages([piece for piece, _ in pieces])
        if len(pieces) == len(texts):
            return vectors
        return pool_windows(len(texts), owners, [tokens for _, tokens in pieces], vectors, normalize=True)

    def default_chunk_size(self) -> int:
        """What fits the window, but no more than before it was declared (1,500 characters): a
        512-token window (1,756) would change every stored file's fingerprint, re-embedding it."""
        return min(UNDECLARED_CHUNK_SIZE, super().default_chunk_size())

    def embed_query(self, text: str) -> list[float]:
        return next(iter(self._model.query_embed([text]))).tolist()

    def _passages(self, texts: list[str]) -> list[list[float]]:
        return [vector.tolist() for vector in self._model.passage_embed(texts, batch_size=self.batch_size)]

    def _warn_cut(self, texts: list[str]) -> None:
        """Once: this FastEmbed hides its tokenizer, so a text past the window loses its end. The
        window is unknown then; texts that would overflow the smallest usual one (256 tokens) are named."""
        fits = chunk_size_for_window(_SMALLEST_WINDOW)
        longer = [len(text) for text in texts if len(text) > fits]
        if longer and not self._warned:
            self._warned = True
            logger.warning(
                "FastEmbed model %s: this FastEmbed version hides its tokenizer, so text past the model's "
                "window is cut off by FastEmbed unread; %d of %d texts here are longer than %d characters "
                "(the longest %d). Set chunk_size to what the model's window holds (%d for 256 tokens).",
                self.model_name,
                len(longer),
                len(texts),
                fits,
                max(longer),
                fits,
            )

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


def _tokenizer_of(model: Any) -> Any:
    """FastEmbed's `tokenizers.Tokenizer` of a loaded TextEmbedding (None where a version hides it)."""
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    return tokenizer if callable(getattr(tokenizer, "encode_batch", None)) else None


def _truncation_of(tokenizer: Any) -> int | None:
    """The window FastEmbed's tokenizer cuts at (its truncation max_length), special tokens included."""
    truncation = getattr(tokenizer, "truncation", None)
    length = truncation.get("max_length") if isinstance(truncation, dict) else None
    return int(length) if length else None
