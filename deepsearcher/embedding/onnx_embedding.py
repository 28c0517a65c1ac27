"""BERT sentence encoders on ONNX Runtime: the torch-free local path (tens of MB, not 2 GB).

The model folder is a sentence-transformers folder (model.safetensors, config.json,
tokenizer.json, mean pooling). Its ONNX graph is built from the weights on first use and
cached (see `_bert_onnx`); tokenisation uses the `tokenizers` library with dynamic
padding. Texts are encoded in length-sorted batches (see `_batching`).

With `quantize: true` (the default) MatMul weights are int8 and activations are quantised
per call, per tensor, so a vector would depend on the other texts of its batch. The default
batch of one text per call avoids that (a text always gets the same vector: re-ingestion
and query/document matches stay exact) and costs nothing here: inside a length-sorted
window there is no padding, and one text per call measured as fast as batches of 8.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.embedding._batching import encode_sorted
from deepsearcher.embedding.base import BaseEmbedding, model_loading

#: Texts per forward pass. One per call: no padding at all and batch-independent int8 vectors;
#: measured as fast as 8 (and faster than 16 or 64) on 2 CPU cores (benchmarks/ingest.py).
DEFAULT_BATCH_SIZE = 1


@register_provider("embedding", requires=("onnxruntime", "onnx", "tokenizers", "safetensors"))
class OnnxEmbedding(BaseEmbedding):
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
        self.model_name = model_name or str(model)
        self.quantize = quantize
        self.batch_size = batch_size
        self.threads = threads
        self.normalize = normalize
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        config = self._read_json("config.json")
        self._dimension = int(config["hidden_size"])
        self.max_length = int(max_length or self._read_json("sentence_bert_config.json", {}).get("max_seq_length", 512))
        pooling = self._read_json("1_Pooling/config.json", {"pooling_mode_mean_tokens": True})
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError(f"{self.model_dir}: only mean-pooling sentence-transformers models run on ONNX here")
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _read_json(self, name: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        path = self.model_dir / name
        if not path.is_file():
            if default is not None:
                return default
            raise FileNotFoundError(f"{path} not found: OnnxEmbedding needs a sentence-transformers model folder")
        return json.loads(path.read_text(encoding="utf-8"))

    def _load(self) -> None:
        """Build or open the cached graph and the tokenizer, once, on first use."""
        with self._lock:
            if self._session is not None:
                return
            ort = require("onnxruntime", extra="onnx", feature="ONNX embeddings")
            tokenizers = require("tokenizers", extra="onnx", feature="ONNX embeddings")
            from deepsearcher.embedding._bert_onnx import cached_model

            with model_loading(f"Loading the embedding model {self.model_name} (ONNX Runtime)"):
                path = cached_model(self.model_dir, quantize=self.quantize)
                tokenizer = tokenizers.Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
                # The bundled tokenizer.json hard-codes padding and truncation to 128: padding is
                # done per batch below, truncation follows the model's max_seq_length.
                tokenizer.no_padding()
                tokenizer.enable_truncation(self.max_length)
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads or min(os.cpu_count() or 1, 8)
                # Busy-waiting worker threads only steal CPU from the insert thread and other processes.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
                self._tokenizer = tokenizer

    def _run(self, encodings: list[Any]) -> list[list[float]]:
        import numpy as np

        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        vectors = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        if self.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors.tolist()

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        encodings = self._tokenizer.encode_batch(texts)
        return encode_sorted(encodings, [len(e.ids) for e in encodings], self.batch_size, self._run)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode([self.document_prefix + text for text in texts])

    def embed_query(self, text: str) -> list[float]:
        return self._encode([self.query_prefix + text])[0]

    @property
    def dimension(self) -> int:
        return self._dimension
