"""Which collections a query or a search may read: written once, for the agents (used directly from
Python) and the query and search use cases alike, so a wrong name or an empty store is answered
the same way everywhere."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from deepsearcher.agent.collection_router import nothing_to_search
from deepsearcher.agent.web_cache import is_web_cache
from deepsearcher.types.errors import CollectionNotFoundError
from deepsearcher.vector_db.base import BaseVectorDB, normalize_collection_name

Visible = Callable[[str], bool]


def _everything(name: str) -> bool:
    return True


def require_collections(vector_db: BaseVectorDB, names: Iterable[str], visible: Visible = _everything) -> list[str]:
    """`names` (de-duplicated) when each exists; else CollectionNotFoundError listing the ones
    the caller may see (`visible`), so CLI, REST and MCP answer a wrong name the same way."""
    checked = list(dict.fromkeys(normalize_collection_name(name) for name in names))
    existing = {info.collection_name for info in vector_db.list_collections()} if checked else set()
    for name in checked:
        if name not in existing:
            raise collection_not_found(name, sorted(n for n in existing if visible(n)))
    return checked


def collection_not_found(name: str, visible_names: list[str]) -> CollectionNotFoundError:
    return CollectionNotFoundError(
        f"Collection '{name}' does not exist (existing: {', '.join(visible_names) or 'none'}). "
        "Load documents into it first or pick an existing one."
    )


def searchable_collections(
    vector_db: BaseVectorDB,
    dim: int | None,
    authorized: Iterable[str] | None = None,
    names: Iterable[str] | None = None,
) -> list[str]:
    """The collections a query or search of `names` (None: any of dimension `dim`) may read that hold
    documents, within `authorized` (None: all): a named one that does not exist is
    CollectionNotFoundError, and nothing loaded anywhere in reach is NoSearchableDataError naming
    where to load."""
    allowed = set(authorized) if authorized is not None else None

    def permitted(name: str) -> bool:
        return allowed is None or name in allowed

    named = list(names or [])
    if named:
        candidates = [name for name in require_collections(vector_db, named, permitted) if permitted(name)]
    else:
        candidates = [
            info.collection_name
            for info in vector_db.list_collections(dim=dim)
            if permitted(info.collection_name) and not is_web_cache(info.collection_name)
        ]
    loaded = [name for name in candidates if vector_db.has_documents(name)]
    if not loaded:
        raise nothing_to_search(candidates)
    return loaded
