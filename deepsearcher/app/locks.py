"""One write lock per collection for the whole process, shared by every front-end.

The REST API's load jobs and deletions, MCP's `load`, the CLI and the library's
`load_from_*` functions all take the same lock, so two loads into one collection never
interleave (both would see a source as new and insert it twice), whoever started them.
"""

from __future__ import annotations

import threading

__all__ = ["collection_lock"]

_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def collection_lock(collection: str) -> threading.Lock:
    """The lock every writer of `collection` holds."""
    with _guard:
        return _locks.setdefault(collection, threading.Lock())
