"""Each text embedded once: a chunk repeating a text embedded in this batch or shortly before
gets that text's vector instead of a forward pass (or a paid request) of its own.

Why: a real folder repeats itself. A man page installed under two names (ctags and
ctags-universal), one README shipped by two packages, the same AUTHORS paragraph at the end
of a suite's pages: 204 of the 3,207 chunks of `benchmarks/real_corpus.py`'s default corpus
repeat another chunk's index text (title + text), 40 of them in a later batch than the
first copy, within 300 chunks of it. The vector is the one the text would get again: the
local model embeds one text per forward pass, so a vector does not depend on its batch.

The memory is small, bounded and lives for one load: the last `capacity` distinct texts
(about 15 MB for 1,024 vectors of 384 floats), not a store of every vector. Batches a
remote embedding has in flight side by side may each compute a text they share: neither
waits for the other.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.types import Chunk

#: Distinct texts remembered: repeats in a folder sit close together (see the module docstring).
DEFAULT_CAPACITY = 1024


class RecentVectors:
    """The vectors of the most recently embedded distinct texts, shared by chunks that repeat them."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = max(0, capacity)
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()  # batches of a remote embedding are embedded in several threads

    def embed(self, embedding: BaseEmbedding, batch: list[Chunk]) -> int:
        """Fill every chunk's embedding; returns how many vectors were computed for it."""
        firsts: dict[str, Chunk] = {}
        with self._lock:
            for chunk in batch:
                text = chunk.index_text
                if text in firsts:
                    continue
                vector = self._vectors.get(text)
                if vector is None:
                    firsts[text] = chunk
                else:
                    self._vectors.move_to_end(text)
                    chunk.embedding = vector
        todo = list(firsts.values())
        if todo:
            embedding.embed_chunks(todo, batch_size=len(todo), show_progress=False)
        with self._lock:
            for chunk in todo:
                self._remember(chunk.index_text, chunk.embedding)
        for chunk in batch:
            first = firsts.get(chunk.index_text)
            if first is not None:  # this text was embedded for this batch: every copy takes its vector
                chunk.embedding = first.embedding
        return len(todo)

    def clear(self) -> None:
        """Forget every vector (a new load starts with none)."""
        with self._lock:
            self._vectors.clear()

    def _remember(self, text: str, vector: list[float] | None) -> None:
        if vector is None or self.capacity == 0:
            return
        self._vectors[text] = vector
        self._vectors.move_to_end(text)
        while len(self._vectors) > self.capacity:
            self._vectors.popitem(last=False)
