"""The web cache: pages fetched for questions, chunked and embedded, in one collection of their own.

Why a collection: the pages are then searched by the same Retriever (same embedding, same hybrid
search, same embedding-model guard) as the user's private chunks, and reused by later questions.
Why its own, hidden one: fetched pages must never mix into the user's collections; the collection
router, `collections` listings and "search everything" skip it (`is_web_cache`). Every chunk
records when its page was fetched (`fetched_at`, and in `source_hash` as `web@<epoch>` so the
freshness of a page is known from `list_sources` alone, on any store); pages older than the TTL
are deleted before each use, so a stale page is never searched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from deepsearcher.config.settings import DEFAULT_CHUNK_OVERLAP
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.loader.splitter import split_docs_to_chunks
from deepsearcher.types import Document
from deepsearcher.vector_db.base import BaseVectorDB

#: The collection holding fetched web pages (never one of the user's).
WEB_CACHE_COLLECTION = "deepsearcher_web_cache"
WEB_CACHE_DESCRIPTION = "Web pages DeepSearcher fetched for questions asked with --web (a cache; clearable)."
_HASH_PREFIX = "web@"


def is_web_cache(name: str) -> bool:
    """Whether `name` is the web cache (skipped wherever the user's collections are listed)."""
    return name == WEB_CACHE_COLLECTION


@dataclass(frozen=True)
class CachedPage:
    """One page of the cache, as `deepsearcher web-cache` lists it."""

    url: str
    chunks: int
    fetched_at: str  # ISO 8601, UTC
    expires_in_hours: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


@dataclass
class WebCache:
    """Fetched pages with a time to live, in `WEB_CACHE_COLLECTION` of the configured store."""

    embedding: BaseEmbedding
    vector_db: BaseVectorDB
    ttl_hours: float = 24.0
    #: None: what fits the embedding model's window, as a load without chunk_size does
    chunk_size: int | None = None
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP
    collection: str = field(default=WEB_CACHE_COLLECTION, init=False)
    #: two questions fetching one page must not store it twice
    _writing: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def ttl_seconds(self) -> float:
        return self.ttl_hours * 3600

    def _fetched(self) -> dict[str, tuple[float, int]]:
        """URL → (fetch time as epoch seconds, chunks) of every cached page; {} without a cache."""
        if not self.vector_db.has_collection(self.collection):
            return {}
        pages: dict[str, tuple[float, int]] = {}
        for url, record in self.vector_db.list_sources(self.collection).items():
            stamp = record.source_hash.removeprefix(_HASH_PREFIX)
            try:
                pages[url] = (float(stamp), record.chunk_count)
            except ValueError:
                pages[url] = (0.0, record.chunk_count)  # not ours: treated as expired
        return pages

    def fresh(self, now: float | None = None) -> set[str]:
        """The URLs cached within the TTL; expired pages are deleted on the way."""
        now = time.time() if now is None else now
        fresh: set[str] = set()
        for url, (fetched, _) in self._fetched().items():
            if now - fetched <= self.ttl_seconds:
                fresh.add(url)
            else:
                self.vector_db.delete_by_reference(self.collection, url)
        return fresh

    def add(self, documents: Iterable[Document], fetched: float | None = None) -> int:
        """Chunk, embed and store fetched pages (each page's old copy replaced); chunks stored."""
        fetched = time.time() if fetched is None else fetched
        pages: dict[str, list[Document]] = {}
        for document in documents:
            if document.page_content.strip():
                pages.setdefault(document.reference, []).append(document)
        if not pages:
            return 0
        self.vector_db.init_collection(
            dim=self.embedding.dimension,
            collection=self.collection,
            description=WEB_CACHE_DESCRIPTION,
            embedding_model=self.embedding.model_name,
        )
        chunks = []
        chunk_size = self.chunk_size or self.embedding.default_chunk_size()
        for docs in pages.values():
            page_chunks = split_docs_to_chunks(docs, chunk_size, self.chunk_overlap)
            for chunk in page_chunks:
                chunk.metadata.setdefault("fetched_at", _iso(fetched))
                chunk.metadata.update(source_hash=f"{_HASH_PREFIX}{fetched:.0f}", source_chunks=len(page_chunks))
            chunks.extend(page_chunks)
        self.embedding.embed_chunks(chunks, show_progress=False)
        with self._writing:
            for url in pages:
                self.vector_db.delete_by_reference(self.collection, url)
            return self.vector_db.insert_data(self.collection, chunks)

    def pages(self, now: float | None = None) -> list[CachedPage]:
        """Every cached page with its fetch time and the hours it has left (negative: expired)."""
        now = time.time() if now is None else now
        return [
            CachedPage(url, chunks, _iso(fetched), round((self.ttl_seconds - (now - fetched)) / 3600, 2))
            for url, (fetched, chunks) in sorted(self._fetched().items())
        ]

    def clear(self) -> int:
        """Drop the cache; how many pages it held."""
        count = len(self._fetched())
        if self.vector_db.has_collection(self.collection):
            self.vector_db.clear_db(self.collection)
        return count
