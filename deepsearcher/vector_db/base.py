"""The vector-store contract. `RetrievalResult`, `CollectionInfo` and
`deduplicate_results` are re-exported here because DeepSearcher users import them
from `deepsearcher.vector_db.base`."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, TypeVar

from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    ConfigurationError,
    RetrievalResult,
    deduplicate_results,
)

__all__ = [
    "SEARCH_MODES",
    "BaseVectorDB",
    "CollectionInfo",
    "RetrievalResult",
    "SourceRecord",
    "StoredChunk",
    "deduplicate_results",
    "normalize_collection_name",
]

SEARCH_MODES = ("dense", "sparse", "hybrid")

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")


#: Names DeepSearcher keeps for its own collections (metadata, capability probes): no user data goes there.
RESERVED_PREFIX = "_deepsearcher_"


def normalize_collection_name(name: str) -> str:
    """Spaces and hyphens become underscores; anything else invalid is an error naming the rule.

    Every name a user gives (CLI, REST, MCP, the Python API, a config) passes through here, so the
    reserved names are refused here once, below every front-end."""
    normalized = name.strip().replace(" ", "_").replace("-", "_")
    if len(name) > 300:  # never echo a huge name back
        name = f"{name[:60]}…({len(name)} characters)"
    if normalized.lower().startswith(RESERVED_PREFIX):
        raise ConfigurationError(
            f"Invalid collection name '{name}': names starting with '{RESERVED_PREFIX}' are reserved for "
            "DeepSearcher's own metadata; pick another name."
        )
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
        return self.chunk_count == self.expected_chunks


@dataclass
class StoredChunk:
    """One stored row of a source, as the ingestion pipeline audits it after a crash:
    the store's id, and the `chunk_key` / `chunk_index` the pipeline gave the chunk."""

    id: Any
    chunk_key: str
    chunk_index: int | None


_Store = TypeVar("_Store", bound="BaseVectorDB")


class BaseVectorDB(ABC):
    """A store of chunks with dense (and optionally sparse) search.

    Every chunk's metadata carries `source_hash` and `source_chunks` (set by the
    ingestion pipeline) so `list_sources` can tell unchanged, changed and partial
    sources apart without a side table.

    `init_collection`, `insert_data`, `search_data` and `get_collection_info` normalize
    the collection name, check the arguments and run the flow every store shares (the
    embedding-model guard included); a store implements the underscore methods below
    them, and the other abstract methods.
    """

    def __init__(self, default_collection: str = "deepsearcher") -> None:
        self.default_collection = normalize_collection_name(default_collection)

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
        name = self._collection(collection)
        dim = int(dim)
        with self._collection_lock():
            if self._exists(name):
                if not force_new_collection:
                    self._open_existing(name, dim, description, embedding_model)
                    return
                self.clear_db(name)
            self._create_collection(name, dim, description, embedding_model, **kwargs)

    def insert_data(
        self,
        collection: str | None,
        chunks: list[Chunk],
        batch_size: int = 256,
        **kwargs: Any,
    ) -> int:
        """Insert chunks that already carry embeddings; returns how many were inserted."""
        name = self._collection(collection)
        if not chunks:
            return 0
        self._require(name, "insert")
        return self._insert(name, chunks, max(1, int(batch_size)), **kwargs)

    def search_data(
        self,
        collection: str | None,
        vector: list[float],
        top_k: int = 5,
        query_text: str | None = None,
        filter: Any = None,
        mode: str | None = None,
        **kwargs: Any,
    ) -> list[RetrievalResult]:
        """Best `top_k` chunks for `vector`.

        mode: "dense" (cosine on the embedding), "sparse" (BM25 on `query_text` alone) or
        "hybrid" (both, fused); by default hybrid when the store was built with
        `hybrid=True` and a `query_text` is given, dense otherwise. `filter`: a
        store-specific filter (see the store's `_search`).
        """
        name = self._collection(collection)
        if mode is not None and mode not in SEARCH_MODES:
            raise ConfigurationError(f"Unknown search mode '{mode}'. Allowed values: {', '.join(SEARCH_MODES)}.")
        top_k = max(1, int(top_k))
        self._require(name, "search")
        return self._search(name, vector, top_k, (query_text or "").strip(), filter, mode, **kwargs)

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

    def has_documents(self, collection: str | None) -> bool:
        """Whether a collection holds at least one chunk: an empty one is never worth an LLM
        call. Listing its sources works on every store; stores that can count override this."""
        return bool(self.list_sources(collection))

    def stored_chunks(self, collection: str | None, reference: str) -> list[StoredChunk] | None:
        """Every stored row of one source (duplicates included), or None when the store
        cannot list them; the pipeline then trusts `list_sources` counts instead."""
        return None

    def delete_ids(self, collection: str | None, ids: list[Any]) -> int:
        """Remove rows by store id (every copy of a duplicated id); returns how many ids were given."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete rows by id")

    def get_collection_info(self, collection: str | None) -> CollectionInfo | None:
        """Name, description, dimension and embedding model of one collection, or None."""
        name = self._collection(collection)
        if not self._exists(name):
            return None
        return self._read_info(name)

    def has_collection(self, collection: str | None) -> bool:
        return self.get_collection_info(collection) is not None

    def close(self) -> None:  # noqa: B027 - an optional hook: a store holding nothing keeps the no-op
        """Release connections and file locks."""

    def __enter__(self: _Store) -> _Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _collection(self, collection: str | None) -> str:
        return normalize_collection_name(collection) if collection else self.default_collection

    # What a store implements for the methods above (names are normalized already).

    @abstractmethod
    def _exists(self, name: str) -> bool:
        """Whether collection `name` exists."""

    @abstractmethod
    def _require(self, name: str, operation: str) -> None:
        """Make `name` ready for `operation`, or raise VectorStoreError listing the existing collections."""

    @abstractmethod
    def _read_info(self, name: str) -> CollectionInfo:
        """The stored info of the existing collection `name`."""

    @abstractmethod
    def _create_collection(
        self,
        name: str,
        dim: int,
        description: str,
        embedding_model: str | None,
        **kwargs: Any,
    ) -> None:
        """Create the missing collection `name`, recording its description, dimension and model."""

    @abstractmethod
    def _open_existing(self, name: str, dim: int, description: str, embedding_model: str | None) -> None:
        """Check the existing collection `name` against the model (see `_common.check_embedding`)
        and record a new description."""

    @abstractmethod
    def _insert(self, name: str, chunks: list[Chunk], batch_size: int, **kwargs: Any) -> int:
        """`insert_data` into the existing collection `name`, `batch_size` chunks per call."""

    @abstractmethod
    def _search(
        self,
        name: str,
        vector: list[float],
        top_k: int,
        text: str,
        filter: Any,
        mode: str | None,
        **kwargs: Any,
    ) -> list[RetrievalResult]:
        """`search_data` on the existing collection `name`, `text` being the stripped query text."""

    def _collection_lock(self) -> AbstractContextManager[Any]:
        """Held while init_collection checks for and creates a collection (none by default)."""
        return nullcontext()
