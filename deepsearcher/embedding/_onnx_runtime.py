"""What every ONNX Runtime sentence encoder shares: a lazily built session, length-sorted batches.

Subclasses say where the graph and the tokenizer come from (`_prepare`); this class opens
the session once, on first use, behind the loading spinner, and runs mean-pooled encoders
over length-sorted batches (see `_batching`). With int8 MatMuls activations are quantised
per call, per tensor, so a vector would depend on the other texts of its batch; the
default batch of one text per call avoids that (a text always gets the same vector:
re-ingestion and query/document matches stay exact). It has a price: batches of 8 run
10-15 % faster on 2 cores, but their vectors drift from the text's own (cosine down to
0.98; 92 % of top-5 neighbours kept on 2Wiki; `benchmarks/ingest.py` prints both).

Threads: by default each forward pass runs on one thread and the batches of a call are spread
over one thread per core, rather than every pass being split across the cores (ONNX Runtime's
intra-op threads). A one-text pass is too small to split well, and its split halves wait for
each other whenever parsing or the store takes a core for a moment: on the 2-core machine,
`benchmarks/real_corpus.py`'s sweep read 31.7 chunks/s side by side against 21.8 for one pass on
2 threads (window 256, batch 1). `threads=N` keeps the old way: N intra-op threads, one pass at a time.

Windows: a text longer than the model's window (`max_length` tokens) is not cut off. Its
tokens past the window come back from the tokenizer as overflowing encodings; each window is
encoded like a text of its own and the text's vector is their mean weighted by tokens, so a
sentence at the end of a long chunk still moves its vector (mean pooling over all its tokens,
taken window by window). Chunks sized to the window (`BaseEmbedding.default_chunk_size`)
rarely need it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.embedding._batching import encode_sorted
from deepsearcher.embedding._windows import pool_windows
from deepsearcher.embedding.base import PrefixedEmbedding, model_loading

#: Texts per forward pass. One per call: no padding at all and batch-independent int8 vectors,
#: for 10-15 % less speed than 8 (see the module docstring; `batch_size=` trades it back).
DEFAULT_BATCH_SIZE = 1


def usable_cores() -> int:
    """Cores this process may run on (its affinity, not the whole machine's), at most 8."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on this platform
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _windows(encoding: Any) -> list[Any]:
    """A text's encoding and the windows its tokenizer cut off past `max_length`."""
    return [encoding, *(getattr(encoding, "overflowing", None) or ())]


class OnnxEncoder(PrefixedEmbedding):
    """A mean-pooling sentence encoder on ONNX Runtime; `_prepare` supplies graph and tokenizer."""

    model_name: str
    quantize: bool
    batch_size: int
    threads: int | None
    normalize: bool
    query_prefix: str
    document_prefix: str
    max_length: int
    _dimension: int

    def _setup(
        self,
        model_name: str,
        dimension: int,
        max_length: int,
        quantize: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        normalize: bool = True,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        self.model_name = model_name
        self._dimension = dimension
        self.max_length = max_length
        self.window_tokens = max_length
        self.quantize = quantize
        self.batch_size = batch_size
        self.threads = threads
        self.normalize = normalize
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _prepare(self) -> tuple[Path, Any]:
        """(the ONNX file to run, a tokenizer whose encode_batch gives `tokenizers` encodings)."""
        raise NotImplementedError

    def _load(self) -> None:
        """Build or open the cached graph and the tokenizer, once, on first use."""
        with self._lock:
            if self._session is not None:
                return
            ort = require("onnxruntime", extra="onnx", feature="ONNX embeddings")
            with model_loading(f"Loading the embedding model {self.model_name} (ONNX Runtime)"):
                path, tokenizer = self._prepare()
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads or 1
                if self.threads is None and (cores := usable_cores()) > 1:
                    self._pool = ThreadPoolExecutor(cores, thread_name_prefix="deepsearcher-onnx")
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
        windows = [(index, window) for index, encoding in enumerate(encodings) for window in _windows(encoding)]
        vectors = encode_sorted(
            [window for _, window in windows], [len(w.ids) for _, w in windows], self.batch_size, self._run, self._pool
        )
        if len(windows) == len(texts):
            return vectors
        return pool_windows(
            len(texts), [index for index, _ in windows], [len(w.ids) for _, w in windows], vectors, self.normalize
        )

    @property
    def dimension(self) -> int:
        return self._dimension
