"""BERT sentence encoders on ONNX Runtime: the torch-free local path (tens of MB, not 2 GB).

The model folder is a sentence-transformers folder (model.safetensors, config.json,
tokenizer.json, mean pooling). Its ONNX graph is built from the weights on first use and
cached (see `_bert_onnx`); tokenisation uses the `tokenizers` library with dynamic
padding; batching and the session are `OnnxEncoder`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._onnx_runtime import DEFAULT_BATCH_SIZE, OnnxEncoder

__all__ = ["DEFAULT_BATCH_SIZE", "OnnxEmbedding"]


@register_provider("embedding", requires=("onnxruntime", "onnx", "tokenizers", "safetensors"))
class OnnxEmbedding(OnnxEncoder):
    """A BERT-family sentence-transformers model folder run with ONNX Runtime (no torch)."""

    def __init__(
        self,
        model: str,
        model_name: str | None = None,
        quantize: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int | None = None,
        threads: int | None = None,
        normalize: bool = True,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        self.model_dir = Path(model).expanduser()
        config = self._read_json("config.json")
        pooling = self._read_json("1_Pooling/config.json", {"pooling_mode_mean_tokens": True})
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError(f"{self.model_dir}: only mean-pooling sentence-transformers models run on ONNX here")
        self._setup(
            model_name or str(model),
            int(config["hidden_size"]),
            int(max_length or self._read_json("sentence_bert_config.json", {}).get("max_seq_length", 512)),
            quantize=quantize,
            batch_size=batch_size,
            threads=threads,
            normalize=normalize,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
        )

    def _read_json(self, name: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        path = self.model_dir / name
        if not path.is_file():
            if default is not None:
                return default
            raise FileNotFoundError(f"{path} not found: OnnxEmbedding needs a sentence-transformers model folder")
        return json.loads(path.read_text(encoding="utf-8"))

    def _prepare(self) -> tuple[Path, Any]:
        tokenizers = require("tokenizers", extra="onnx", feature="ONNX embeddings")
        from deepsearcher.embedding._bert_onnx import cached_model

        path = cached_model(self.model_dir, quantize=self.quantize)
        tokenizer = tokenizers.Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        # The bundled tokenizer.json hard-codes padding and truncation to 128: padding is
        # done per batch, truncation follows the model's max_seq_length.
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_length)
        return path, tokenizer
