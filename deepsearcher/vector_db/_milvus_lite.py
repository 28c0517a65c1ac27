"""Milvus Lite plumbing: where the local database lives, who holds it, and releasing it.

milvus-lite 3.x runs in-process: pymilvus turns a ``*.db`` uri into a gRPC server on a
free localhost port, backed by a data *directory* locked with ``flock`` on its ``LOCK``
file. When another process holds that lock, milvus-lite only logs the cause and pymilvus
raises a bare ``ConnectionConfigException("Open local milvus failed")``; the helpers here
capture the cause so the caller can say what actually happened.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from deepsearcher.types.errors import cause_chain

_SERVER_MANAGER_LOGGER = "milvus_lite.server_manager"
LOCK_FILENAME = "LOCK"

_users_lock = threading.Lock()
_users: dict[str, int] = {}
#: Writes begun or ended per Lite database path in this process (see `note_write`).
_writes: dict[str, int] = {}


def is_server_uri(uri: str) -> bool:
    return uri.lower().startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))


def default_lite_path() -> str:
    import platformdirs

    return str(Path(platformdirs.user_data_dir("deepsearcher")) / "milvus.db")


class StartupCapture(logging.Filter):
    """Catches (and keeps off the console) milvus-lite's "Failed to start" log record,
    whose exc_info holds the real reason a local database could not be opened."""

    def __init__(self) -> None:
        super().__init__()
        self.exc: BaseException | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            self.exc = record.exc_info[1]
            return False
        return True

    def __enter__(self) -> StartupCapture:
        logging.getLogger(_SERVER_MANAGER_LOGGER).addFilter(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger(_SERVER_MANAGER_LOGGER).removeFilter(self)


def is_lock_error(exc: BaseException | None) -> bool:
    """True when `exc` (or its cause chain) is milvus-lite's DataDirLockedError."""
    return any(type(seen).__name__ == "DataDirLockedError" for seen in cause_chain(exc))


def lock_is_held_elsewhere(path: str) -> bool:
    """Probe the LOCK file of a Lite database (only meaningful when this process does
    not hold it itself)."""
    lock_path = os.path.join(path, LOCK_FILENAME)
    if not os.path.exists(lock_path):
        return False
    try:
        import fcntl
    except ImportError:  # Windows: no cheap probe
        return False
    fd = os.open(lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def lock_holder_pid(path: str) -> int | None:
    """The pid holding the flock on `path`/LOCK, from /proc/locks (Linux), else None."""
    lock_path = os.path.join(path, LOCK_FILENAME)
    try:
        inode = os.stat(lock_path).st_ino
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.readlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4083 fe:00:2147196 0 EOF" (blocked waiters carry "->")
        if "->" in parts:
            continue
        if len(parts) >= 6 and parts[1] == "FLOCK":
            try:
                pid = int(parts[4])
                lock_inode = int(parts[5].rsplit(":", 1)[-1])
            except ValueError:
                continue
            if lock_inode == inode and pid != os.getpid():
                return pid
    return None


def in_use_message(path: str, pid: int | None) -> str:
    who = f" (pid {pid})" if pid else ""
    return (
        f"The Milvus Lite database {path} is in use by another process{who}. Stop that process, "
        "query through `deepsearcher serve`, or use a Milvus server uri (http://host:19530)."
    )


def acquire(path: str) -> None:
    with _users_lock:
        _users[path] = _users.get(path, 0) + 1


def note_write(path: str) -> None:
    """Count a write to the Lite database at `path` (as it begins and as it ends), by any store
    object of this process: what is kept from an earlier read is stale once the count moves."""
    with _users_lock:
        _writes[path] = _writes.get(path, 0) + 1


def writes(path: str) -> int:
    """Writes begun or ended on the Lite database at `path` in this process (see `note_write`)."""
    return _writes.get(path, 0)


def release(path: str) -> None:
    """Drop one user of a Lite database; the last one stops its in-process server so the
    file lock is released before the process exits."""
    with _users_lock:
        count = _users.get(path, 0) - 1
        if count > 0:
            _users[path] = count
            return
        _users.pop(path, None)
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return
    server_manager_instance.release_server(path)


#: Index sidecars Milvus Lite 3.x keeps beside each data segment: vector (``.idx``) and scalar (``.sidx``).
INDEX_SIDECAR_SUFFIXES = (".idx", ".sidx")


def remove_index_sidecars(db_path: str, collection: str) -> list[str]:
    """Delete the index sidecars of one collection so the next load rebuilds them.

    Milvus Lite 3.x writes them in place, not atomically, so a process killed mid-write leaves
    a truncated one (empty, or cut inside the header or the data) that every later load trips
    over, each with a different numpy / faiss message. They are derived data: a missing sidecar
    is rebuilt from the segment's own rows on load, so removing them loses only rebuild time."""
    removed: list[str] = []
    for path in sorted((Path(db_path) / "collections" / collection).glob("**/indexes/*")):
        if path.suffix in INDEX_SIDECAR_SUFFIXES:
            path.unlink()
            removed.append(str(path))
    return removed


# ------------------------------------------------------------------ the dense index, chosen by size

#: `index_type` "AUTO" (the default): exact search while a collection is small, HNSW past a size.
AUTO_INDEX = "AUTO"
#: Rows past which a Milvus Lite collection under AUTO gets its HNSW index. Measured with
#: benchmarks/scale.py (384-d, 2 shared cores): exact search has p95 ~50 ms at 6k rows and 144 ms
#: at 20k, where HNSW answers in 14.5 ms at recall@10 0.999 and builds in ~1 ms a row.
HNSW_SWITCH_ROWS = 10_000
#: How the HNSW graphs are built (Milvus Lite over faiss): degree and build-time exploration.
HNSW_BUILD_PARAMS = {"M": 16, "efConstruction": 200}
#: Search-time exploration of each segment's graph (at least top_k is used).
HNSW_SEARCH_EF = 96


def dense_index_at_creation(index_type: str, is_lite: bool) -> str | None:
    """The dense index a new collection is created with. Under AUTO: none on Milvus Lite (each
    segment is then searched exactly, as FLAT would, and an index can be declared later without
    releasing the collection), FLAT on a server (which needs one to load)."""
    if index_type != AUTO_INDEX:
        return index_type
    return None if is_lite else "FLAT"


def switches_by_size(index_type: str, is_lite: bool) -> bool:
    """Whether this store declares HNSW once a collection grows (Milvus Lite under AUTO only)."""
    return is_lite and index_type == AUTO_INDEX


def hnsw_search_params(index_type: str, is_lite: bool, limit: int) -> dict[str, int] | None:
    """The `ef` a dense search passes, when the collection may hold HNSW graphs."""
    if index_type.startswith("HNSW") or switches_by_size(index_type, is_lite):
        return {"ef": max(HNSW_SEARCH_EF, limit)}
    return None
