"""The graph's edges read once per store state: the rows titled by each name, kept until a write.

Why: every search of a walk looks up the chunks titled by the names its hits mention, and
DeepSearch's ten-odd searches of one question meet the same chunks, hence the same names, again
and again; most names title no chunk at all. Each look-up is a filtered query (milvus-lite
evaluates the filter row by row in Python, ~3 ms on 1,000 rows, under the GIL that the other
searches of the step wait on). Kept here per title key, a name is read from the store once
until the store changes.

Exact by construction: an entry is valid only for the write generation it was read in (the
store counts its writes, before and after each one), so a load, replacement or delete is seen
by the next look-up; a look-up that ran while a write started or ended is not kept. Writes made
with the pymilvus client directly, around the store, are not counted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

Row = dict[str, Any]
#: Reads the rows titled by the given keys; None when the store's row limit cut the answer short.
ReadRows = Callable[[list[str]], Sequence[Row] | None]

#: Title keys kept, at most (most are names no chunk is titled by: an empty entry).
CAPACITY = 20_000
#: Rows kept over all keys, at most (each holds its embedding).
ROW_CAPACITY = 2_000


class TitleRows:
    """Rows per (scope, title key), each entry tied to the write generation it was read in."""

    def __init__(self, capacity: int = CAPACITY, row_capacity: int = ROW_CAPACITY) -> None:
        self.capacity = capacity
        self.row_capacity = row_capacity
        self._entries: OrderedDict[tuple[Hashable, str], tuple[int, tuple[Row, ...]]] = OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()
        #: Keys read from the store / answered from here (for tests and benchmarks).
        self.read = 0
        self.hits = 0

    def rows(
        self,
        scope: Hashable,
        keys: Sequence[str],
        generation: Callable[[], int],
        read: ReadRows,
        key_of: Callable[[Row], str],
        limit: int,
    ) -> list[Row] | None:
        """The rows titled by `keys` within `scope` (the collection and its filter): kept ones, and
        the others read in one call of `read`. None when the answer would pass `limit` rows (the
        caller then reads the way it always did, so a cut answer is the same cut answer)."""
        start = generation()
        found: list[Row] = []
        missing: list[str] = []
        with self._lock:
            for key in keys:
                entry = self._entries.get((scope, key))
                if entry is not None and entry[0] == start:
                    self._entries.move_to_end((scope, key))
                    found.extend(entry[1])
                    self.hits += 1
                else:
                    missing.append(key)
        if missing:
            fresh = read(missing)
            if fresh is None:
                return None
            self.read += len(missing)
            by_key: dict[str, list[Row]] = {key: [] for key in missing}
            for row in fresh:
                by_key.setdefault(key_of(row), []).append(row)
            if generation() == start:  # no write began or ended meanwhile: what was read is the state
                self._keep(scope, by_key, start)
            found.extend(fresh)
        return found if len(found) < limit else None

    def _keep(self, scope: Hashable, by_key: dict[str, list[Row]], generation: int) -> None:
        with self._lock:
            for key, rows in by_key.items():
                old = self._entries.pop((scope, key), None)
                self._rows -= len(old[1]) if old else 0
                self._entries[(scope, key)] = (generation, tuple(rows))
                self._rows += len(rows)
            while self._entries and (len(self._entries) > self.capacity or self._rows > self.row_capacity):
                _, (_, dropped) = self._entries.popitem(last=False)
                self._rows -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._rows = 0
