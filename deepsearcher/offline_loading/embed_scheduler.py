"""Up to `max_concurrency` embedding batches in flight, for embeddings behind an HTTP API.

Past a laptop, embedding is a remote API and ingestion throughput is set by how many
requests are in flight, not by local CPU: one batch at a time leaves the pipe idle for a
whole round trip per batch. The scheduler keeps a bounded window of batches being
embedded in worker threads and hands back batches as they finish, in completion order.
That order does not matter to the store: a source counts as complete only when all its
chunks are stored (`SourceRecord.complete`), so a crash with some batches in flight leaves
an incomplete source that the next run replaces, exactly as with sequential batches.
Throttling stays with the provider: each request retries 429 / 5xx answers and honours
Retry-After (`embedding._http`), so a throttled request holds its slot in the window
and the window never grows past `max_concurrency`.

Local models (max_concurrency 1, the default) embed in the calling thread, as before.
Each text is embedded once (`repeated_texts`): a chunk repeating a text embedded in its batch
or shortly before shares that vector.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.offline_loading.repeated_texts import RecentVectors
from deepsearcher.types import Chunk

#: A batch embedded, and how many vectors were computed for it (fewer than its chunks when texts repeat).
Embedded = tuple[list[Chunk], int]


def concurrency_of(embedding: BaseEmbedding) -> int:
    """The embedding's `max_concurrency` (HTTP providers set it), 1 for everything else."""
    try:
        return max(1, int(getattr(embedding, "max_concurrency", 1) or 1))
    except (TypeError, ValueError):
        return 1


class EmbedScheduler:
    """Embeds batches of chunks with at most `max_concurrency` batches in flight."""

    def __init__(self, embedding: BaseEmbedding, max_concurrency: int | None = None) -> None:
        self.embedding = embedding
        self.max_concurrency = max(1, int(max_concurrency or concurrency_of(embedding)))
        self._pool: ThreadPoolExecutor | None = None
        self._in_flight: set[Future[Embedded]] = set()
        self._recent = RecentVectors()
        self.peak_in_flight = 0  # the most batches ever in flight at once (for tests and benchmarks)

    def _embed(self, batch: list[Chunk]) -> Embedded:
        return batch, self._recent.embed(self.embedding, batch)

    def forget(self) -> None:
        """Drop the remembered vectors (a new load starts with none)."""
        self._recent.clear()

    def submit(self, batch: list[Chunk]) -> list[Embedded]:
        """Start embedding `batch`; returns the batches finished by now (waiting only while
        the window is full). A failed batch raises here, and batches not yet started are cancelled."""
        if self.max_concurrency == 1:
            return [self._embed(batch)]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="deepsearcher-embed")
        self._in_flight.add(self._pool.submit(self._embed, batch))
        self.peak_in_flight = max(self.peak_in_flight, len(self._in_flight))
        return self._collect(block=len(self._in_flight) >= self.max_concurrency)

    def drain(self) -> list[Embedded]:
        """Wait for every batch in flight; returns them (in completion order)."""
        finished: list[Embedded] = []
        while self._in_flight:
            finished.extend(self._collect(block=True))
        return finished

    def _collect(self, block: bool) -> list[Embedded]:
        if not self._in_flight:
            return []
        done, _ = wait(self._in_flight, timeout=None if block else 0, return_when=FIRST_COMPLETED)
        self._in_flight -= done
        try:
            return [future.result() for future in done]
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Cancel batches not yet started and let the worker threads go."""
        for future in self._in_flight:
            future.cancel()
        self._in_flight.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> EmbedScheduler:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
