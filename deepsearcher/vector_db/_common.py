"""What the Milvus and Qdrant stores do alike: the fields every chunk carries, the model
guard, the checks on a chunk before it is stored, the tally behind `list_sources` and
the messages a user sees."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, SupportsInt, TypeVar

from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    EmbeddingMismatchError,
    RetrievalResult,
    VectorStoreError,
)
from deepsearcher.types.errors import CollectionNotFoundError, StorageFaultError
from deepsearcher.vector_db.base import SourceRecord

# What each stored chunk carries besides its vectors.
TEXT = "text"  # the chunk as a reader sees it
INDEX_TEXT = "index_text"  # title + chunk: what BM25 indexes
REFERENCE = "reference"
#: What a store's search returns (its own hit type), passed through `search_pinned`.
R = TypeVar("R")
SOURCE_HASH = "source_hash"
SOURCE_CHUNKS = "source_chunks"
METADATA = "metadata"


def plain_json(value: Any) -> Any:
    """`value` as plain JSON data (paths, dates, ... become strings)."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def as_count(value: object) -> int:
    """A chunk count from metadata; 0 when it is missing or not a number."""
    if not isinstance(value, SupportsInt | str):  # numpy's integers too
        return 0
    try:
        return int(value or 0)
    except ValueError:
        return 0


def source_fields(metadata: Mapping[str, object]) -> tuple[str, int]:
    """(source_hash, source_chunks) of a chunk's metadata, as the ingestion pipeline set them."""
    return str(metadata.get("source_hash") or ""), as_count(metadata.get("source_chunks"))


def batches(chunks: list[Chunk], size: int) -> Iterator[list[Chunk]]:
    """`chunks` in runs of `size` (the last one shorter)."""
    for start in range(0, len(chunks), size):
        yield chunks[start : start + size]


def checked_vector(chunk: Chunk, dim: int | None) -> list[float]:
    """The chunk's embedding as floats; VectorStoreError when it has none or the wrong size."""
    if chunk.embedding is None:
        raise VectorStoreError(
            f"Chunk of '{chunk.reference}' has no embedding; embed chunks (embedding.embed_chunks) before inserting."
        )
    vector = [float(x) for x in chunk.embedding]
    if dim is not None and len(vector) != dim:
        raise EmbeddingMismatchError(
            f"Chunk of '{chunk.reference}' has a {len(vector)}-dimensional embedding but the collection "
            f"stores {dim} dimensions. Use the embedding model the collection was built with, or reload "
            "it with `--force-new-collection`."
        )
    return vector


def check_embedding(info: CollectionInfo, dim: int, embedding_model: str | None) -> None:
    """EmbeddingMismatchError when the existing collection `info` was built with another model or dimension."""
    model_differs = bool(embedding_model and info.embedding_model and embedding_model != info.embedding_model)
    if model_differs or (info.dim is not None and info.dim != dim):
        raise EmbeddingMismatchError(
            f"Collection '{info.collection_name}' was built with embedding model '{info.embedding_model or 'unknown'}' "
            f"(dim {info.dim}), but the configured embedding is '{embedding_model or 'unknown'}' "
            f"(dim {dim}). Vectors of different models cannot be compared. Reload the collection with "
            "`--force-new-collection` (force_new_collection=True), or pick another collection name."
        )


def info_updates(info: CollectionInfo, description: str, embedding_model: str | None) -> dict[str, str]:
    """What reopening a collection changes in its stored info: a new description, and the
    embedding model when none was recorded (keys "description" and "embedding_model")."""
    updates: dict[str, str] = {}
    if description and description != info.description:
        updates["description"] = description
    if embedding_model and not info.embedding_model:
        updates["embedding_model"] = embedding_model
    return updates


def of_dim(infos: list[CollectionInfo], dim: int | None) -> list[CollectionInfo]:
    """`infos` of collections with `dim` dimensions (all of them when dim is None)."""
    return [info for info in infos if dim is None or info.dim == int(dim)]


def missing_collection(operation: str, name: str, location: str, existing: list[str]) -> CollectionNotFoundError:
    """The error for an operation on a collection that is not there, listing those that are."""
    listing = ", ".join(existing) if existing else "none"
    return CollectionNotFoundError(
        f"Cannot {operation}: collection '{name}' does not exist in {location}. "
        f"Existing collections: {listing}. Load documents into it first or pick an existing one."
    )


#: What a storage fault says inside a store's error text (the store passes the OS error on as
#: text, so its errno survives only there), and what the user should do about each.
_STORAGE_FAULTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("[errno 28]", "no space left on device", "disk quota exceeded", "[errno 122]"),
        "no space left on its disk. Free some space, then run the same command again "
        "(a load resumes: the chunks already stored are kept)",
    ),
    (
        ("[errno 27]", "file too large"),
        "a file of it would pass this process's file size limit (ulimit -f). Raise the limit, then run "
        "the same command again",
    ),
    (
        ("[errno 30]", "read-only file system"),
        "its file system is read-only. Make it writable (or point vector_db.config.uri at a writable "
        "folder), then run the same command again",
    ),
    (
        ("[errno 13]",),
        "this user may not write its files. Fix the folder's permissions, then run the same command again",
    ),
    (
        ("lock file", "lock was lost", "lock is not held"),
        "its lock was lost (the LOCK file was removed or taken by another process). Stop other processes "
        "using it, then run the same command again",
    ),
)


def storage_fault(detail: str) -> str | None:
    """What to tell the user when `detail` is a storage fault, else None."""
    text = detail.lower()
    for needles, advice in _STORAGE_FAULTS:
        if any(needle in text for needle in needles):
            return advice
    return None


def operation_failed(
    store: str, operation: str, collection: str | None, location: str, detail: str
) -> VectorStoreError:
    """The error for a failed store call, naming the operation, the collection and where the store is;
    a full disk, read-only file system or lost lock is a StorageFaultError saying what to do."""
    where = f" on collection '{collection}'" if collection else ""
    advice = storage_fault(detail)
    if advice is not None:
        return StorageFaultError(
            f"{store} {operation}{where} failed: the store at {location} cannot be written: {advice}."
        )
    return VectorStoreError(f"{store} {operation}{where} failed ({location}): {detail}")


class Closeable(Protocol):
    """A store SDK's client: something that closes."""

    def close(self) -> object: ...


def close_client(client: Closeable | None, logger: logging.Logger, store: str) -> None:
    """Close a store client; a failure is logged, because closing must not fail."""
    if client is None:
        return
    try:
        client.close()
    except Exception:  # noqa: BLE001 - closing must not fail
        logger.debug("closing the %s client failed", store, exc_info=True)


def stored_result(fields: dict[str, Any], score: float) -> RetrievalResult:
    """A search hit from the stored fields of a chunk."""
    return RetrievalResult(
        embedding=None,
        text=str(fields.get(TEXT, "")),
        reference=str(fields.get(REFERENCE, "")),
        metadata=dict(fields.get(METADATA) or {}),
        score=score,
    )


class SourceTally:
    """Per reference: how many chunks are stored, the source hash, and how many chunks the
    source had when it was ingested (what `list_sources` reports)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.hashes: dict[str, str] = {}
        self.expected: dict[str, int] = {}
        self.versions: dict[str, set[str]] = {}

    def add(self, reference: str, source_hash: object, source_chunks: object) -> None:
        """Count one stored chunk of `reference`."""
        self.counts[reference] = self.counts.get(reference, 0) + 1
        if source_hash:
            self.versions.setdefault(reference, set()).add(str(source_hash))
        if source_hash and not self.hashes.get(reference):
            self.hashes[reference] = str(source_hash)
        self.expected[reference] = max(self.expected.get(reference, 0), as_count(source_chunks))

    def records(self) -> dict[str, SourceRecord]:
        return {
            reference: SourceRecord(
                reference=reference,
                source_hash=self.hashes.get(reference, ""),
                chunk_count=count,
                expected_chunks=self.expected.get(reference) or count,
                versions=len(self.versions.get(reference, ())) or 1,
            )
            for reference, count in self.counts.items()
        }


def hidden_versions(
    pin: threading.local,
    cache: dict[str, frozenset[str]],
    name: str,
    read_marker: Callable[[], frozenset[str]],
    lock: AbstractContextManager[object] | None = None,
) -> frozenset[str]:
    """The versions a store hides now: inside a pinned search (`search_pinned`), the set that search
    read; else the stored marker read once into `cache` (an embedded store is one process: its own
    writes move the marker, and it updates `cache` as it does)."""
    if getattr(pin, "on", False):
        return frozenset(pin.hidden)
    hidden = cache.get(name)
    if hidden is None:
        with lock if lock is not None else nullcontext():
            hidden = cache.setdefault(name, read_marker())
    return hidden


def search_pinned(
    pin: threading.local,
    read_marker: Callable[[], tuple[int, frozenset[str]]],
    search: Callable[[], list[R]],
    retries: int = 5,
) -> list[R]:
    """`search` between two reads of a stored version marker (epoch, hidden versions), the hidden set
    put on the thread-local `pin` meanwhile: when the epoch moved, the search may have seen two steps
    of a replacement and runs again (a sequence lock; see vector_db/_milvus_versions.py)."""
    epoch, hidden = read_marker()
    results: list[R] = []
    for _ in range(retries):
        pin.on, pin.hidden = True, hidden
        try:
            results = search()
        finally:
            pin.on = False
        after, hidden_after = read_marker()
        if after == epoch:
            break
        epoch, hidden = after, hidden_after
    return results
