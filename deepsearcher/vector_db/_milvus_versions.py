"""The stored per-version marker: which source versions every reader keeps out of its searches.

A changed source is replaced by storing its new chunks before deleting its old ones. Between
the two, the store holds both; a reader in another process (a Milvus server has many), or any
reader after the loading process was killed, must still see one version whole. So each
collection has one marker row in MARKER_COLLECTION: the versions (source hashes) hidden now,
and an epoch that grows at every change. The loader moves it in three steps per source:
hide the new version before its first chunk is stored; once the last one is stored, hide the
old version instead (the switch); once the old rows are deleted, hide nothing. A kill leaves
the marker where it was: the partial new version stays hidden and the next run completes it.
A collection without a marker row (loaded before this existed) hides nothing.

Readers on a server read the marker before and after each search (a sequence lock): an epoch
that moved meanwhile means the search may have mixed two steps, and it is run again. Writers
on a server wait (one Strong read) until their row changes are visible before moving the
marker, and until the marker is visible before the next row changes, so a reader's snapshot of
the rows is never behind the marker it read. Embedded Milvus Lite is opened by one process at
a time: there the marker is read once per collection and kept in memory.
"""

from __future__ import annotations

import json
import threading
from types import ModuleType
from typing import TYPE_CHECKING

from deepsearcher.types import VectorStoreError
from deepsearcher.vector_db._milvus_meta import NAME, STRONG, VECTOR, Op, SideTable, create_side_collection

if TYPE_CHECKING:
    from pymilvus import CollectionSchema, DataType, MilvusClient

MARKER_COLLECTION = "_deepsearcher_versions"
HIDDEN, EPOCH = "hidden", "epoch"
#: What Milvus says when a collection is loaded before its index exists (code 700).
UNINDEXED = "index not found"
#: How often a search is run again when the marker moved under it, before it takes the last answer.
RETRIES = 5


class VersionMarker(SideTable):
    """Rows of (collection name → hidden source versions, epoch) in MARKER_COLLECTION."""

    def __init__(self, client: MilvusClient, pymilvus: ModuleType, op: Op) -> None:
        super().__init__(client, pymilvus, op)
        self._lock = threading.Lock()

    def _exists(self) -> bool:
        if not self._ready:
            with self._op("has_collection", MARKER_COLLECTION):
                if not self._client.has_collection(MARKER_COLLECTION):
                    return False
            try:
                with self._op("load_collection", MARKER_COLLECTION):
                    self._client.load_collection(MARKER_COLLECTION)
            except VectorStoreError as exc:
                if UNINDEXED not in str(exc):
                    raise
                # another process is creating it (its index comes next): it has hidden nothing yet
                return False
            self._ready = True
        return True

    def _create(self) -> None:
        def fields(schema: CollectionSchema, data_type: type[DataType]) -> None:
            schema.add_field(HIDDEN, data_type.VARCHAR, max_length=65535)
            schema.add_field(EPOCH, data_type.INT64)

        create_side_collection(self._client, self._pm, self._op, MARKER_COLLECTION, fields)
        self._ready = True

    def read(self, name: str, level: dict[str, str] | None = None) -> tuple[int, frozenset[str]]:
        """(epoch, hidden versions) of collection `name`; (0, nothing) when it has no marker.
        `level`: the consistency of the read (Strong when left out)."""
        if not self._exists():
            return 0, frozenset()
        with self._op("query", MARKER_COLLECTION):
            rows = self._client.query(
                MARKER_COLLECTION,
                filter=f"{NAME} == {json.dumps(name)}",
                output_fields=[HIDDEN, EPOCH],
                **(level if level is not None else {"consistency_level": STRONG}),
            )
        if not rows:
            return 0, frozenset()
        return int(rows[0][EPOCH]), frozenset(json.loads(rows[0][HIDDEN] or "[]"))

    def change(self, name: str, hide: set[str], show: set[str]) -> frozenset[str]:
        """Hide `hide` and show `show` in one step (one row replaced, epoch + 1); the new hidden set.
        Returns once the new row is visible to every reader."""
        with self._lock:  # this process's own changes one at a time (another process's may interleave)
            epoch, hidden = self.read(name)
            changed = (hidden - show) | hide
            if changed == hidden:
                return hidden
            if not self._exists():
                self._create()
            row = {NAME: name, HIDDEN: json.dumps(sorted(changed)), EPOCH: epoch + 1, VECTOR: [0.0, 0.0]}
            with self._op("upsert", MARKER_COLLECTION):
                self._client.upsert(MARKER_COLLECTION, [row])
            self.read(name)  # Strong: visible everywhere before the caller's next row change
            return changed

    def forget(self, name: str) -> None:
        """Remove the marker of a dropped collection."""
        if not self._exists():
            return
        with self._op("delete", MARKER_COLLECTION):
            self._client.delete(MARKER_COLLECTION, filter=f"{NAME} == {json.dumps(name)}")
