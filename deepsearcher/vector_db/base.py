"""The vector-store contract. `RetrievalResult`, `CollectionInfo` and
`deduplicate_results` are re-exported here because DeepSearcher users import them
from `deepsearcher.vector_db.base`."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from deepsearcher.types import Chunk, CollectionInfo, ConfigurationError, RetrievalResult, deduplicate_results

__all__ = [
    "BaseVectorDB",
    "CollectionInfo",
    "RetrievalResult",
    "SourceRecord",
    "deduplicate_results",
    "normalize_collection_name",
]

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")


def normalize_collection_name(name: str) -> str:
    """Spaces and hyphens become underscores; anything else invalid is an error naming the rule."""
    normalized = name.strip().replace(" ", "_").replace("-", "_")
    if not _VALID_NAME.match(normalized):
        raise ConfigurationError(
            f"Invalid collection name '{name}': use letters, digits and underscores, "
            "starting with a letter or underscore (spaces and hyphens are turned into underscores), "
            "at most 255 characters."
        )
    return normalized


@dataclass
class SourceRecord:
    """What the store knows about one ingested source (a file or URL)."""

    reference: str
    source_hash: str
    chunk_count: int
    expected_chunks: int

    @property
    def complete(self) -> bool:
        """False when a previous load was interrupted half-way through this source."""
        return self.chunk_count >= self.expected_chunks


class BaseVectorDB(ABC):
    """A store of chunks with dense (and optionally sparse) search.

    Every chunk's metadata carries `source_hash` and `source_chunks` (set by the
    ingestion pipeline) so `list_sources` can tell unchanged, changed and partial
    sources apart without a side table.
    """

    def __init__(self, default_collection: str = "deepsearcher") -> None:
        self.default_collection = normalize_collection_name(default_collection)

    @abstractmethod
    def init_collection(
        self,
        dim: int,
        collection: str | None = None,
        description: str = "",
        force_new_collection: bool = False,
        embedding_model: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Create the collection if missing (or drop and recreate with force_new_collection).

        An existing collection built with another `embedding_model` or `dim` raises
        EmbeddingMismatchError naming `--force-new-collection` as the fix.
        """

    @abstractmethod
    def insert_data(self, collection: str | None, chunks: list[Chunk], batch_size: int = 256, **kwargs: Any) -> int:
        """Insert chunks that already carry embeddings; returns how many were inserted."""

    @abstractmethod
    def search_data(
        self,
        collection: str | None,
        vector: list[float],
        top_k: int = 5,
        query_text: str | None = None,
        **kwargs: Any,
    ) -> list[RetrievalResult]:
        """Best chunks for `vector` (hybrid with BM25 on `query_text` where supported)."""

    @abstractmethod
    def list_collections(self, dim: int | None = None) -> list[CollectionInfo]:
        """Collections with their descriptions; those of another dimension are skipped."""

    @abstractmethod
    def clear_db(self, collection: str | None = None) -> None:
        """Drop a collection (the default one when None)."""

    @abstractmethod
    def delete_by_reference(self, collection: str | None, reference: str) -> int:
        """Remove every chunk of one source; returns how many were removed."""

    @abstractmethod
    def list_sources(self, collection: str | None) -> dict[str, SourceRecord]:
        """Ingested sources of a collection keyed by reference."""

    @abstractmethod
    def get_collection_info(self, collection: str | None) -> CollectionInfo | None:
        """Name, description, dimension and embedding model of one collection, or None."""

    def has_collection(self, collection: str | None) -> bool:
        return self.get_collection_info(collection) is not None

    def close(self) -> None:
        """Release connections and file locks."""

    def _collection(self, collection: str | None) -> str:
        return normalize_collection_name(collection) if collection else self.default_collection
