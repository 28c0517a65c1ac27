"""The collections use case, written once: list, describe, drop, list and delete sources, and the
checks every query and search makes first. The CLI, REST, MCP and the web page call these, so a
collection looks the same (and a wrong name is answered the same way) wherever it is asked for.

`visible` is the caller's permission test (an API key limited to some collections); the
default lets the caller see everything, as on the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass

from deepsearcher.agent.searchable import collection_not_found, require_collections
from deepsearcher.agent.web_cache import is_web_cache
from deepsearcher.app.components import Components
from deepsearcher.app.locks import collection_lock
from deepsearcher.types.errors import BadInputError
from deepsearcher.vector_db.base import normalize_collection_name

__all__ = [
    "CollectionSummary",
    "SourceSummary",
    "Visible",
    "WriteLock",
    "delete_source",
    "describe_collection",
    "drop_collection",
    "list_collections",
    "list_sources",
    "require_collections",
]

Visible = Callable[[str], bool]
#: How a caller holds a collection's write lock: the REST server waits a bounded time and answers 409
#: naming the job that holds it; in a CLI process nothing else holds it.
WriteLock = Callable[[str], AbstractContextManager[object]]


def _everything(name: str) -> bool:
    return True


@dataclass(frozen=True)
class CollectionSummary:
    """One collection as every front-end shows it."""

    name: str
    description: str
    dim: int | None
    embedding_model: str | None
    sources: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class SourceSummary:
    """One loaded source (file, page, upload) of a collection."""

    reference: str
    chunks: int
    complete: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def list_collections(components: Components, visible: Visible = _everything) -> list[CollectionSummary]:
    """Every collection the caller may see, with its number of sources."""
    vector_db = components.vector_db
    return [
        CollectionSummary(
            name=info.collection_name,
            description=info.description or "",
            dim=info.dim,
            embedding_model=info.embedding_model,
            sources=len(vector_db.list_sources(info.collection_name)),
        )
        for info in vector_db.list_collections()
        if visible(info.collection_name) and not is_web_cache(info.collection_name)  # listed by `web-cache`
    ]


def describe_collection(components: Components, name: str, visible: Visible = _everything) -> CollectionSummary:
    """The collection `name`, or CollectionNotFoundError listing those the caller may see (a reserved
    or invalid name is refused as such first, not reported missing)."""
    name = normalize_collection_name(name)
    for summary in list_collections(components, visible):
        if summary.name == name:
            return summary
    raise collection_not_found(name, [summary.name for summary in list_collections(components, visible)])


def drop_collection(
    components: Components, name: str, visible: Visible = _everything, write_lock: WriteLock = collection_lock
) -> None:
    """Drop `name` and everything in it, under the collection's write lock (no load interleaves)."""
    (name,) = require_collections(components.vector_db, [name], visible)
    with write_lock(name):
        components.vector_db.clear_db(name)


def list_sources(components: Components, name: str, visible: Visible = _everything) -> list[SourceSummary]:
    """The sources of `name`, sorted by reference."""
    (name,) = require_collections(components.vector_db, [name], visible)
    records = components.vector_db.list_sources(name)
    return [
        SourceSummary(reference=reference, chunks=record.chunk_count, complete=record.complete)
        for reference, record in sorted(records.items())
    ]


def delete_source(
    components: Components,
    name: str | None,
    reference: str,
    visible: Visible = _everything,
    write_lock: WriteLock = collection_lock,
) -> int:
    """Remove every chunk of `reference` (as listed by `list_sources`) from `name` (None: the default
    collection) under its write lock; how many were removed (0: no such source)."""
    if not reference.strip():
        raise BadInputError("Name the source to delete: a file path or URL as it was loaded.")
    (collection,) = require_collections(
        components.vector_db, [name or components.vector_db.default_collection], visible
    )
    with write_lock(collection):
        return components.vector_db.delete_by_reference(collection, reference)
