"""The collection checks every front-end makes before a query or a search, written once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from deepsearcher.types.errors import CollectionNotFoundError

__all__ = ["require_collections"]


def require_collections(
    vector_db: Any,
    names: Iterable[str],
    visible: Callable[[str], bool] = lambda name: True,
) -> list[str]:
    """`names` (de-duplicated) when each exists; else CollectionNotFoundError listing the ones
    the caller may see (`visible`), so CLI, REST and MCP answer a wrong name the same way."""
    checked = list(dict.fromkeys(names))
    for name in checked:
        if not vector_db.has_collection(name):
            existing = [info.collection_name for info in vector_db.list_collections() if visible(info.collection_name)]
            raise CollectionNotFoundError(
                f"Collection '{name}' does not exist (existing: {', '.join(existing) or 'none'}). "
                "Load documents into it first or pick an existing one."
            )
    return checked
