"""Stores written against upstream DeepSearcher's base: adapted here, not in the core.

Upstream's `BaseVectorDB` asked for four methods: `init_collection`, `insert_data`,
`search_data` and `clear_db` (`list_collections` optional). A subclass that implements none
of our template hooks is of that shape; this module tells `vector_db/base.py` which of the
four it lacks (so a class of neither shape is still refused at instantiation) and adapts it
once, when the class is created:

- its `init_collection`, `search_data`, `list_collections` and `insert_data` are called with
  only the keywords their signatures name (our callers add `query_text=`, `embedding_model=`,
  which a method without `**kwargs` would refuse with TypeError);
- its `insert_data` (which returned None or True) returns how many chunks it took.

Attached once, by `deepsearcher/vector_db/__init__.py`; nothing else imports it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from deepsearcher.utils.contracts import drop_unknown_keywords, overrides
from deepsearcher.vector_db.base import BaseVectorDB, attach_subclass_shape, uses_template

#: What a store written against upstream's base implements (`list_collections` optional).
UPSTREAM_METHODS = ("init_collection", "insert_data", "search_data", "clear_db")


class UpstreamStoreShape:
    """The `SubclassShape` of a store written for upstream DeepSearcher."""

    def missing(self, cls: type[BaseVectorDB]) -> set[str] | None:
        if uses_template(cls):
            return None
        return {name for name in UPSTREAM_METHODS if not overrides(cls, cls._contract_base, name)}

    def adapt(self, cls: type[BaseVectorDB]) -> None:
        for name in ("init_collection", "search_data", "list_collections"):
            if name in cls.__dict__:
                setattr(cls, name, drop_unknown_keywords(cls.__dict__[name]))
        if "insert_data" in cls.__dict__:
            cls.insert_data = _counting_insert(drop_unknown_keywords(cls.__dict__["insert_data"]))  # type: ignore[method-assign]


def _counting_insert(insert: Callable[..., object]) -> Callable[..., int]:
    """An upstream-shaped `insert_data` (returning None or True), returning how many chunks it took."""

    @functools.wraps(insert)
    def call(self: BaseVectorDB, collection: str | None, chunks: list[object], *args: object, **kwargs: object) -> int:
        inserted = insert(self, collection, chunks, *args, **kwargs)
        if isinstance(inserted, int) and not isinstance(inserted, bool):
            return inserted
        return len(chunks)

    return call


attach_subclass_shape(UpstreamStoreShape())
