"""The vector-store contract. `RetrievalResult`, `CollectionInfo` and
`deduplicate_results` are re-exported here because DeepSearcher users import them
from `deepsearcher.vector_db.base`."""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    ConfigurationError,
    RetrievalResult,
    deduplicate_results,
)
from deepsearcher.types.json import JSONObject
from deepsearcher.utils.contracts import ContractMeta, overrides

__all__ = [
    "SEARCH_MODES",
    "BaseVectorDB",
    "SubclassShape",
    "CollectionInfo",
    "RetrievalResult",
    "SourceRecord",
    "StoredChunk",
    "attach_subclass_shape",
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
    #: How many versions (source hashes) have rows: 2 while a changed source is being replaced
    #: (its new chunks are stored before the old ones go) or after a load was killed meanwhile.
    versions: int = 1

    @property
    def complete(self) -> bool:
        """False when a previous load was interrupted half-way through this source."""
        return self.chunk_count == self.expected_chunks and self.versions <= 1


@dataclass
class StoredChunk:
    """One stored row of a source, as the ingestion pipeline audits it after a crash:
    the store's id, and the `chunk_key` / `chunk_index` the pipeline gave the chunk."""

    id: int | str
    chunk_key: str
    chunk_index: int | None
    #: The version (source hash) the row belongs to, when the store keeps it.
    source_hash: str | None = None


_Store = TypeVar("_Store", bound="BaseVectorDB")


class _ChunkLike(Protocol):
    """What any chunk has, ours or upstream's (metadata and vector are read when present)."""

    @property
    def text(self) -> str: ...

    @property
    def reference(self) -> str: ...


def as_chunk(item: _ChunkLike) -> Chunk:
    """`item` as our Chunk: upstream-shaped chunks lack `index_text` (and `title`), which every
    store reads; their text, reference, metadata and vector carry over unchanged."""
    if isinstance(item, Chunk):
        return item
    return Chunk(
        text=item.text,
        reference=item.reference,
        metadata=dict(getattr(item, "metadata", None) or {}),
        embedding=getattr(item, "embedding", None),
    )


#: The hooks behind each public method of the template (our own stores implement these).
_TEMPLATE_HOOKS: dict[str, tuple[str, ...]] = {
    "init_collection": ("_exists", "_create_collection", "_open_existing"),
    "insert_data": ("_require", "_insert"),
    "search_data": ("_require", "_search"),
    "get_collection_info": ("_exists", "_read_info"),
}
#: What our own stores also implement; a store of another shape gets the fallbacks below.
_RICH_METHODS = ("list_collections", "delete_by_reference", "list_sources")
_TEMPLATE_USE = "run the shared init_collection / insert_data / search_data flow"


class SubclassShape(Protocol):
    """Another contract a store subclass may follow instead of ours (upstream DeepSearcher's
    four methods: deepsearcher/vector_db/_upstream.py), attached from outside this module."""

    def missing(self, cls: type[BaseVectorDB]) -> set[str] | None:
        """The methods `cls` still lacks under this shape, or None when `cls` is not of it."""
        ...

    def adapt(self, cls: type[BaseVectorDB]) -> None:
        """Fit a subclass of this shape to the callers of ours (run once, at class creation)."""
        ...


_SHAPES: list[SubclassShape] = []


def attach_subclass_shape(shape: SubclassShape) -> None:
    """Accept subclasses of `shape` too (for classes created from now on)."""
    _SHAPES.append(shape)


def _shape_of(cls: type[BaseVectorDB]) -> tuple[SubclassShape, set[str]] | None:
    for shape in _SHAPES:
        missing = shape.missing(cls)
        if missing is not None:
            return shape, missing
    return None


def uses_template(cls: type[BaseVectorDB]) -> bool:
    """True for a store implementing at least one of our hooks (the template's shape)."""
    hooks = {hook for needed in _TEMPLATE_HOOKS.values() for hook in needed}
    return any(overrides(cls, cls._contract_base, hook) for hook in hooks)


class BaseVectorDB(metaclass=ContractMeta):
    """A store of chunks with dense (and optionally sparse) search.

    Two shapes of subclass are accepted:

    - ours: the underscore hooks below (`_exists`, `_create_collection`, `_open_existing`,
      `_require`, `_insert`, `_search`, `_read_info`) plus `list_collections`, `clear_db`,
      `delete_by_reference` and `list_sources`. `init_collection`, `insert_data`,
      `search_data` and `get_collection_info` then normalize the collection name, check
      the arguments and run the flow every store shares (the embedding-model guard
      included). Every chunk's metadata carries `source_hash` and `source_chunks` (set
      by the ingestion pipeline) so `list_sources` tells unchanged, changed and partial
      sources apart without a side table.
    - another shape attached with `attach_subclass_shape`: upstream's `init_collection`,
      `insert_data`, `search_data` and `clear_db`, adapted in deepsearcher/vector_db/_upstream.py
      (this module knows no more of it). What such a store lacks falls back here
      (`list_collections`: the default collection; `list_sources`: nothing known, so every
      load inserts every source; `get_collection_info`: from `list_collections`), and removing
      one source (`delete_by_reference`) raises NotImplementedError naming the method.
    """

    #: Also a class attribute: upstream-shaped stores often skip `super().__init__()`.
    default_collection: str = "deepsearcher"

    def __init__(self, default_collection: str = "deepsearcher") -> None:
        self.default_collection = normalize_collection_name(default_collection)

    @classmethod
    def __missing_methods__(cls) -> set[str]:
        shaped = _shape_of(cls)
        if shaped is not None:
            return shaped[1]
        missing = {name for name in _RICH_METHODS if not overrides(cls, cls._contract_base, name)}
        for public, hooks in _TEMPLATE_HOOKS.items():
            if not overrides(cls, cls._contract_base, public):
                missing.update(hook for hook in hooks if not overrides(cls, cls._contract_base, hook))
        return missing

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        shaped = _shape_of(cls)
        if shaped is not None:
            shaped[0].adapt(cls)

    def init_collection(
        self,
        dim: int,
        collection: str | None = None,
        description: str = "",
        force_new_collection: bool = False,
        embedding_model: str | None = None,
        **kwargs: object,
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
        **kwargs: object,
    ) -> int:
        """Insert chunks that already carry embeddings; returns how many were inserted.

        A chunk may be any object with `text`, `reference`, `metadata` and `embedding` (upstream's
        `Chunk` or a `RetrievalResult`, as DeepSearcher's tests insert): it is stored as our Chunk."""
        name = self._collection(collection)
        if not chunks:
            return 0
        self._require(name, "insert")
        return self._insert(name, [as_chunk(chunk) for chunk in chunks], max(1, int(batch_size)), **kwargs)

    def search_data(
        self,
        collection: str | None,
        vector: list[float],
        top_k: int = 5,
        query_text: str | None = None,
        filter: object = None,
        mode: str | None = None,
        **kwargs: object,
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

    def list_collections(self, dim: int | None = None) -> list[CollectionInfo]:
        """Collections with their descriptions; those of another dimension are skipped.

        A store that cannot list them (upstream's base did not ask for it) has one: its default."""
        return [CollectionInfo(collection_name=self.default_collection)]

    @abstractmethod
    def clear_db(self, collection: str | None = None) -> None:
        """Drop a collection (the default one when None)."""

    def delete_by_reference(self, collection: str | None, reference: str) -> int:
        """Remove every chunk of one source; returns how many were removed."""
        raise _not_implemented(self, "delete_by_reference(collection, reference)", "remove or replace one source")

    def list_sources(self, collection: str | None) -> dict[str, SourceRecord]:
        """Ingested sources of a collection keyed by reference.

        A store that cannot list them knows none: every load then inserts every source, as upstream did."""
        return {}

    def has_documents(self, collection: str | None) -> bool:
        """Whether a collection holds at least one chunk: an empty one is never worth an LLM
        call. Listing its sources works on every store; stores that can count override this;
        one that can do neither is assumed to hold some."""
        if not overrides(type(self), BaseVectorDB, "list_sources"):
            return True
        return bool(self.list_sources(collection))

    def stored_chunks(self, collection: str | None, reference: str) -> list[StoredChunk] | None:
        """Every stored row of one source (duplicates included), or None when the store
        cannot list them; the pipeline then trusts `list_sources` counts instead."""
        return None

    def hide_versions(self, collection: str | None, hide: Iterable[str], show: Iterable[str] = ()) -> None:  # noqa: B027
        """Keep the rows of the `hide` source versions out of this store object's searches from now on,
        and let those of `show` back in, in one step (the ingestion pipeline hides a changed source's
        new version while it is being written, then swaps it for the old one). A store that cannot
        filter by version keeps showing every row: the default does nothing."""

    def delete_ids(self, collection: str | None, ids: Sequence[int | str]) -> int:
        """Remove rows by store id (every copy of a duplicated id); returns how many ids were given."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete rows by id")

    def copy_source(self, collection: str | None, source: str, target: str) -> int | None:
        """Store a copy of every row of `source` (vectors included) under the reference `target`:
        a renamed file keeps its vectors. None when the store cannot: the file is embedded again."""
        return None

    def source_metadata(self, collection: str | None, reference: str) -> JSONObject | None:
        """The metadata of one stored chunk of `reference` (a web page's ETag, ...), or None when
        the store cannot read it back or holds no such source."""
        return None

    def fit_index(self, collection: str | None = None) -> str | None:
        """Fit the collection's index to its size after a load (see Milvus); the index type
        declared now, or None when nothing changed (stores that choose no index: always)."""
        return None

    def rebuild_graph(self, collection: str | None = None) -> int | None:
        """Add the entity graph's stored fields to a collection loaded without them (see Milvus),
        without re-embedding; the rows rewritten, 0 when already there, None for stores that
        keep no graph."""
        return None

    def get_collection_info(self, collection: str | None) -> CollectionInfo | None:
        """Name, description, dimension and embedding model of one collection, or None."""
        name = self._collection(collection)
        if not overrides(type(self), BaseVectorDB, "_exists"):  # no template hooks: what list_collections says
            return next((info for info in self.list_collections() if info.collection_name == name), None)
        if not self._exists(name):
            return None
        return self._read_info(name)

    def has_collection(self, collection: str | None) -> bool:
        return self.get_collection_info(collection) is not None

    def close(self) -> None:  # noqa: B027 - an optional hook: a store holding nothing keeps the no-op
        """Release connections and file locks."""

    def __enter__(self: _Store) -> _Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _collection(self, collection: str | None) -> str:
        return normalize_collection_name(collection) if collection else self.default_collection

    # What a store implements for the methods above (names are normalized already).

    def _exists(self, name: str) -> bool:
        """Whether collection `name` exists."""
        raise _not_implemented(self, "_exists", _TEMPLATE_USE)

    def _require(self, name: str, operation: str) -> None:
        """Make `name` ready for `operation`, or raise VectorStoreError listing the existing collections."""
        raise _not_implemented(self, "_require", _TEMPLATE_USE)

    def _read_info(self, name: str) -> CollectionInfo:
        """The stored info of the existing collection `name`."""
        raise _not_implemented(self, "_read_info", _TEMPLATE_USE)

    def _create_collection(
        self,
        name: str,
        dim: int,
        description: str,
        embedding_model: str | None,
        **kwargs: object,
    ) -> None:
        """Create the missing collection `name`, recording its description, dimension and model."""
        raise _not_implemented(self, "_create_collection", _TEMPLATE_USE)

    def _open_existing(self, name: str, dim: int, description: str, embedding_model: str | None) -> None:
        """Check the existing collection `name` against the model (see `_common.check_embedding`)
        and record a new description."""
        raise _not_implemented(self, "_open_existing", _TEMPLATE_USE)

    def _insert(self, name: str, chunks: list[Chunk], batch_size: int, **kwargs: object) -> int:
        """`insert_data` into the existing collection `name`, `batch_size` chunks per call."""
        raise _not_implemented(self, "_insert", _TEMPLATE_USE)

    def _search(
        self,
        name: str,
        vector: list[float],
        top_k: int,
        text: str,
        filter: Any,
        mode: str | None,
        **kwargs: object,
    ) -> list[RetrievalResult]:
        """`search_data` on the existing collection `name`, `text` being the stripped query text."""
        raise _not_implemented(self, "_search", _TEMPLATE_USE)

    def _collection_lock(self) -> AbstractContextManager[object]:
        """Held while init_collection checks for and creates a collection (none by default)."""
        return nullcontext()


def _not_implemented(store: BaseVectorDB, method: str, needed_for: str) -> NotImplementedError:
    return NotImplementedError(
        f"{type(store).__name__} does not implement {method}, which is needed to {needed_for}; "
        "add it to the store (see deepsearcher.vector_db.base.BaseVectorDB)."
    )
