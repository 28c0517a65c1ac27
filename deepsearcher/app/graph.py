"""The entity-graph use case, written once: rebuild a collection's graph without re-embedding.

A collection loaded with `vector_db.config.graph: false`, or before the graph existed, has no
`title_key` field: entity links then fall back to a slower filter on each row's metadata. The
rebuild adds the field from what each row already holds (no file is read, no text embedded).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from deepsearcher.app.collections import Visible, WriteLock, _everything, require_collections
from deepsearcher.app.components import Components
from deepsearcher.app.locks import collection_lock
from deepsearcher.types.errors import BadInputError

__all__ = ["GraphRebuild", "rebuild_graph"]


@dataclass(frozen=True)
class GraphRebuild:
    """What a rebuild did: the chunks rewritten (0: the collection already had its graph)."""

    collection: str
    rows: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def rebuild_graph(
    components: Components, name: str | None, visible: Visible = _everything, write_lock: WriteLock = collection_lock
) -> GraphRebuild:
    """Rebuild the graph of `name` (None: the default collection) under its write lock."""
    vector_db = components.vector_db
    (collection,) = require_collections(vector_db, [name or vector_db.default_collection], visible)
    with write_lock(collection):
        rows = vector_db.rebuild_graph(collection)
    if rows is None:
        raise BadInputError(
            f"The {type(vector_db).__name__} store keeps no entity graph: only Milvus (Lite or a server) does."
        )
    return GraphRebuild(collection=collection, rows=rows)
