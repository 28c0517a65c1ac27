"""Milvus Lite 3.2 searches without per-row Python work: the same results, in time that no
longer grows with every stored row.

Why this module exists: milvus-lite 3.2 decides, on every search, which stored rows are live
(the newest version of their primary key, not deleted) with a Python loop over every row of
every segment (`search/executor_indexed.py`'s `_update_max_seqs` and `_build_local_mask`, and
the same loop in `Collection._search_sparse`), and scores BM25 one posting at a time in Python
(`index/sparse_inverted.py`). With HNSW the vector search itself takes about a millisecond,
so at 200k rows those loops were ~90% of a dense search (88 ms p50) and the BM25 half of a
hybrid search grew the same way: linear in rows, whatever the index.

What it does, without changing a result:
- the live-row masks are computed with numpy (sort by primary key then sequence number; the
  newest version of each key wins; tombstones are looked up with `searchsorted`) and CACHED
  per collection, keyed by exactly what decides them: the segment objects, the tombstone map,
  and the memtable's keys, sequence numbers and pending deletes (compared whole, not hashed,
  so a cached mask is only reused for an identical state). A search after a write recomputes
  once, in C; searches between writes reuse the masks;
- BM25 is scored per query term over numpy arrays of the posting list, in the same float32 /
  float64 steps as the scalar code (NumPy 2 promotion), summed in the same order, and ranked
  with the same tie order (first term that reached a row, then row number).
Everything else (index search, merge, projection, memtable) follows the original functions
step by step. Cases the fast path does not cover (partition-scoped searches, non-integer
primary keys) call the original functions.

It patches milvus-lite in place (`install`), only for the versions it was written against
(`SUPPORTED`), and only when the patched functions are still the originals; the test
(tests/test_lite_speed.py) runs both paths on the same data, upserts, deletes and unflushed
rows included, and requires identical ids and distances. Upstream, the same change belongs in
milvus-lite's executor (a cached live-row bitmap per segment generation).
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from milvus_lite.engine.collection import Collection
    from milvus_lite.index.brute_force import BruteForceIndex
    from milvus_lite.index.scalar import IndexedFilterPlan
    from milvus_lite.index.sparse_inverted import SparseInvertedIndex
    from milvus_lite.search.filter.semantic import CompiledExpr
    from milvus_lite.storage.delta_index import DeltaIndex
    from milvus_lite.storage.memtable import MemTable
    from milvus_lite.storage.segment import Segment

logger = logging.getLogger(__name__)

#: milvus-lite versions whose search internals this module reproduces (read and tested against 3.2.2).
SUPPORTED = ("3.2.",)
#: Collections whose live-row masks are kept (each entry holds only its current segment generation).
CACHED_COLLECTIONS = 16

_install_lock = threading.Lock()
_originals: dict[str, Any] = {}


# ------------------------------------------------------------------ live rows, vectorised and cached


def _int_keys(values: Sequence[object] | np.ndarray) -> np.ndarray | None:
    """`values` (primary keys) as int64, or None when they are not all plain integers."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    try:
        array = np.asarray(values)
    except (ValueError, TypeError):
        return None
    if array.dtype.kind not in "iu" or (array.dtype.kind == "u" and array.size and array.max() > 2**63 - 1):
        return None
    return array.astype(np.int64, copy=False)


def _lookup(keys: np.ndarray, table_keys: np.ndarray, table_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of `keys`: whether it is in the sorted `table_keys`, and its value there (0 if not)."""
    if table_keys.size == 0:
        return np.zeros(keys.shape, dtype=bool), np.zeros(keys.shape, dtype=np.int64)
    at = np.minimum(np.searchsorted(table_keys, keys), table_keys.size - 1)
    found = table_keys[at] == keys
    return found, np.where(found, table_values[at], 0)


def _sorted_map(entries: dict[int | str, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """A {pk: seq} dict as sorted key / value arrays, or None for non-integer keys."""
    keys = _int_keys(list(entries.keys()))
    if keys is None:
        return None
    values = np.asarray(list(entries.values()), dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    return keys[order], values[order]


@dataclass(frozen=True, slots=True)
class State:
    """What decides which rows are live: the segments, the tombstones (pk -> delete seq), and the
    memtable's keys, their seqs and its pending deletes (pk -> (seq, partition))."""

    segments: tuple
    delta: dict[int | str, int]
    mt_pks: list
    mt_seqs: list
    mt_deletes: dict[int | str, tuple[int, str]]

    def same_as(self, other: State) -> bool:
        """Identical segment objects and equal everything else (compared whole, never hashed)."""
        return (
            len(self.segments) == len(other.segments)
            and all(a is b for a, b in zip(self.segments, other.segments, strict=True))
            and self.mt_pks == other.mt_pks
            and self.mt_seqs == other.mt_seqs
            and self.mt_deletes == other.mt_deletes
            and self.delta == other.delta
        )


@dataclass(slots=True)
class _Entry:
    """The live-row masks of one collection state, and (a copy of) the state they were computed for."""

    state: State
    #: id(segment) -> (segment, its primary keys as int64), reused while the segment lives.
    segment_keys: dict[int, tuple[Segment, np.ndarray]]
    #: Per segment, the dense path's mask (a pending delete of any partition hides a row).
    masks: list[np.ndarray]
    mt_mask: np.ndarray
    #: Per segment, the sparse path's mask (only a pending delete of the row's partition hides it).
    scoped: list[np.ndarray]
    mt_scoped: np.ndarray


class LiveRows:
    """Which rows of each segment (and of the memtable) a search may return: the newest version
    of their key, not deleted by a tombstone or by a pending memtable delete. Computed with numpy
    and cached per collection (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        #: How many times masks were computed (not found cached): what the tests watch.
        self.computed = 0

    def masks(self, state: State, all_partitions: object) -> _Entry | None:
        """The entry for this state (computed now if not cached), or None when the keys are not integers."""
        key = _collection_key(state.segments)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.state.same_as(state):
                self._entries.move_to_end(key)
                return entry
            segment_keys = dict(entry.segment_keys) if entry is not None else {}
        fresh = self._compute(state, segment_keys, all_partitions)
        if fresh is None:
            return None
        with self._lock:
            self.computed += 1
            self._entries[key] = fresh
            self._entries.move_to_end(key)
            while len(self._entries) > CACHED_COLLECTIONS:
                self._entries.popitem(last=False)
        return fresh

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    @staticmethod
    def _compute(
        state: State, known_keys: dict[int, tuple[Segment, np.ndarray]], all_partitions: object
    ) -> _Entry | None:
        segments, delta, mt_pks, mt_seqs, mt_deletes = (
            state.segments,
            state.delta,
            state.mt_pks,
            state.mt_seqs,
            state.mt_deletes,
        )
        segment_keys: dict[int, tuple[Segment, np.ndarray]] = {}
        keys_per_segment: list[np.ndarray] = []
        for seg in segments:
            known = known_keys.get(id(seg))
            if known is not None and known[0] is seg:
                keys = known[1]
            else:
                converted = _int_keys(seg.pks)
                if converted is None:
                    return None
                keys = converted
            segment_keys[id(seg)] = (seg, keys)
            keys_per_segment.append(keys)
        mt_keys = _int_keys(mt_pks)
        delta_map = _sorted_map(delta)
        pending = _sorted_map({pk: entry[0] for pk, entry in mt_deletes.items()})
        if mt_keys is None or delta_map is None or pending is None:
            return None

        # The newest version of each key, across every segment and the memtable.
        seqs_per_segment = [np.asarray(seg.seqs, dtype=np.int64) for seg in segments]
        mt_seq_array = np.asarray(mt_seqs, dtype=np.int64)
        all_keys = np.concatenate([*keys_per_segment, mt_keys])
        all_seqs = np.concatenate([*seqs_per_segment, mt_seq_array])
        newest = np.ones(all_keys.size, dtype=bool)
        if all_keys.size:
            order = np.lexsort((all_seqs, all_keys))
            sorted_keys = all_keys[order]
            last_of_group = np.append(sorted_keys[1:] != sorted_keys[:-1], True)
            group = np.cumsum(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1]))) - 1
            group_max = all_seqs[order][last_of_group]
            newest[order] = all_seqs[order] == group_max[group]

        masks: list[np.ndarray] = []
        scoped: list[np.ndarray] = []
        start = 0
        for seg, keys, seqs in zip(segments, keys_per_segment, seqs_per_segment, strict=True):
            live = newest[start : start + keys.size].copy()
            start += keys.size
            deleted, delete_seq = _lookup(keys, *delta_map)
            live &= ~(deleted & (delete_seq > seqs))
            pending_found, pending_seq = _lookup(keys, *pending)
            pending_hit = pending_found & (pending_seq > seqs)
            masks.append(live & ~pending_hit)  # the dense path: a pending delete of any partition
            if pending_hit.any():  # the sparse path: only a delete aimed at this segment's partition
                same = np.array(
                    [mt_deletes[pk][1] in (all_partitions, seg.partition) for pk in keys[pending_hit].tolist()]
                )
                pending_hit[pending_hit] = same
            scoped.append(live & ~pending_hit)
        mt_scoped = newest[start:].copy()  # the sparse path: newest, no tombstone
        if mt_keys.size:
            deleted, delete_seq = _lookup(mt_keys, *delta_map)
            mt_scoped &= ~(deleted & (delete_seq > mt_seq_array))
        mt_live = mt_scoped.copy()  # the dense path: nor a pending delete
        if mt_keys.size:
            pending_found, pending_seq = _lookup(mt_keys, *pending)
            mt_live &= ~(pending_found & (pending_seq > mt_seq_array))
        return _Entry(
            state=State(segments, dict(delta), list(mt_pks), list(mt_seqs), dict(mt_deletes)),
            segment_keys=segment_keys,
            masks=masks,
            mt_mask=mt_live,
            scoped=scoped,
            mt_scoped=mt_scoped,
        )


def _collection_key(segments: tuple) -> str:
    """The collection a set of segments belongs to (their files live under its directory)."""
    for seg in segments:
        path = str(getattr(seg, "file_path", ""))
        if "/partitions/" in path:
            return path.rsplit("/partitions/", 1)[0]
        return path.rsplit("/", 2)[0]
    return ""


LIVE_ROWS = LiveRows()


# ------------------------------------------------------------------ the dense search


def _found(local_ids: np.ndarray, dists: np.ndarray) -> Iterator[tuple[int, int, float]]:
    """(query, row, distance) of each hit of a per-source search, its -1 padding left out."""
    for q in range(local_ids.shape[0]):
        for j in range(local_ids.shape[1]):
            local = int(local_ids[q, j])
            if local < 0:
                break  # padding from here on
            yield q, local, float(dists[q, j])


def search_with_index(
    query_vectors: np.ndarray,
    segments: Iterable[Segment],
    memtable: MemTable,
    delta_index: DeltaIndex,
    top_k: int,
    metric_type: str,
    pk_field: str,
    vector_field: str,
    partition_names: list[str] | None = None,
    compiled_filter: CompiledExpr | None = None,
    output_fields: list[str] | None = None,
    indexed_filter_plan: IndexedFilterPlan | None = None,
    project_record_fn: Callable[[dict], dict] | None = None,
    search_params: dict[str, Any] | None = None,
) -> list[list[dict]]:
    """milvus_lite.search.executor_indexed.execute_search_with_index with cached live-row masks."""
    arguments = dict(locals())  # every parameter, for milvus-lite's own function when the fast path does not apply
    original = _originals["dense"]
    segments = arguments["segments"] = tuple(segments)
    if partition_names:
        return original(**arguments)
    if query_vectors.ndim == 1:
        query_vectors = query_vectors.reshape(1, -1)
    if query_vectors.dtype != np.float32:
        query_vectors = query_vectors.astype(np.float32, copy=False)
    nq = int(query_vectors.shape[0])
    if nq == 0 or top_k <= 0:
        return [[] for _ in range(nq)]
    in_scope = tuple(seg for seg in segments if seg.num_rows > 0)
    mt_pks, mt_seqs, mt_vecs, mt_row_refs, mt_table = memtable.to_search_snapshot(
        vector_field=vector_field, partition_names=None, include_table=compiled_filter is not None
    )
    if not in_scope and not mt_pks:
        return [[] for _ in range(nq)]
    mt_deletes = memtable.delete_index_snapshot()
    entry = LIVE_ROWS.masks(State(in_scope, delta_index._map, mt_pks, mt_seqs.tolist(), mt_deletes), _all_partitions())
    if entry is None:
        return original(**arguments)

    from milvus_lite.index.brute_force import BruteForceIndex

    candidates: list[list[tuple[float, int, int]]] = [[] for _ in range(nq)]

    def recall(source: int, mask: np.ndarray, vectors: np.ndarray, index: BruteForceIndex | None) -> None:
        if not mask.any():
            return
        if index is None:
            index = BruteForceIndex.build(vectors, metric_type)
        found = index.search(query_vectors, top_k, valid_mask=None if mask.all() else mask, params=search_params)
        for q, local, dist in _found(*found):
            candidates[q].append((dist, source, local))

    if compiled_filter is not None:
        from milvus_lite.search.filter import evaluate_mask
        from milvus_lite.search.indexed_filter import evaluate_segment_filter
    for source, (seg, live) in enumerate(zip(in_scope, entry.masks, strict=True)):
        vectors, null_mask = seg.vector_data(vector_field)
        combined = evaluate_segment_filter(seg, compiled_filter, indexed_filter_plan) if compiled_filter else None
        if null_mask is not None:
            combined = combined & null_mask if combined is not None else null_mask
        mask = live & combined.astype(bool) if combined is not None else live
        recall(source, mask, vectors, seg.indexes.get(vector_field))
    if mt_pks:
        mask = entry.mt_mask
        if compiled_filter is not None and mt_table is not None:
            mask = mask & evaluate_mask(compiled_filter, mt_table).astype(bool)
        recall(len(in_scope), mask, mt_vecs, None)

    if project_record_fn is not None:
        project = project_record_fn
    elif output_fields is None:

        def project(record: dict) -> dict:
            return {k: v for k, v in record.items() if k != pk_field and k != vector_field}
    else:
        keep = set(output_fields) - {pk_field}

        def project(record: dict) -> dict:
            return {k: record[k] for k in keep if k in record}

    results: list[list[dict]] = []
    for per_query in candidates:
        per_query.sort(key=lambda c: (c[0], c[1], c[2]))
        hits = []
        for dist, source, local in per_query[:top_k]:
            if source < len(in_scope):
                record = in_scope[source].row_to_dict(local)
                fallback = in_scope[source].pks[local]
            else:
                record = memtable.materialize_row(*mt_row_refs[local])
                fallback = mt_pks[local]
            pk = record.get(pk_field) if pk_field in record else fallback
            hits.append({"id": pk, "distance": dist, "entity": project(record)})
        results.append(hits)
    return results


# ------------------------------------------------------------------ BM25


_posting_cache_lock = threading.Lock()


def _postings(index: SparseInvertedIndex, term: object) -> tuple[np.ndarray, np.ndarray] | None:
    """One term's posting list as (row ids, tfs) arrays, converted once per index (int32 ids,
    float32 tfs when that holds them exactly)."""
    cache = index.__dict__.get("_deepsearcher_postings")
    if cache is None:
        with _posting_cache_lock:
            cache = index.__dict__.setdefault("_deepsearcher_postings", {})
    arrays = cache.get(term)
    if arrays is None:
        posting = index._posting_lists.get(term)
        if not posting:
            return None
        ids = np.fromiter((p[0] for p in posting), dtype=np.int32, count=len(posting))
        tfs = np.fromiter((p[1] for p in posting), dtype=np.float64, count=len(posting))
        narrow = tfs.astype(np.float32)
        # term counts: half the memory, the same values
        arrays = cache.setdefault(term, (ids, narrow if np.array_equal(narrow, tfs) else tfs))
    return arrays


def _array_index_class() -> Any:
    """ArrayBM25Index, defined once milvus-lite is importable (it subclasses milvus-lite's index)."""
    global ArrayBM25Index
    if ArrayBM25Index is not None:
        return ArrayBM25Index
    from milvus_lite.index.sparse_inverted import SparseInvertedIndex

    class _ArrayBM25Index(SparseInvertedIndex):  # type: ignore[misc]
        """A segment's BM25 index held as sorted arrays (term, row, tf) instead of Python lists of
        tuples: built from the stored column in C (a second or two at 1M rows, not a minute) and a
        fraction of the memory. Same statistics as SparseInvertedIndex.build (doc lengths, avgdl,
        per-term postings in row order) whenever the stored weights are term counts, which is all
        a BM25 function stores; `from_column` returns None otherwise and the caller builds the
        scalar index."""

        terms: np.ndarray
        starts: np.ndarray
        row_ids: np.ndarray
        tfs: np.ndarray

        @classmethod
        def from_column(cls, column: Any, k1: float, b: float) -> _ArrayBM25Index | None:
            raw = column.to_pylist()
            sizes = np.fromiter((len(r) if isinstance(r, bytes) else -1 for r in raw), np.int64, len(raw))
            if (sizes < 0).any() and not all(r is None for r, size in zip(raw, sizes, strict=True) if size < 0):
                return None  # a row held something other than packed bytes
            sizes = np.maximum(sizes, 0)
            if (sizes % 8).any():
                return None
            pairs = np.frombuffer(b"".join(r for r in raw if r), dtype=[("term", "<u4"), ("tf", "<f4")])
            tfs = pairs["tf"]
            if not (np.isfinite(tfs).all() and (tfs == np.floor(tfs)).all()):
                return None
            rows = np.repeat(np.arange(len(raw), dtype=np.int32), sizes // 8)
            index = cls(k1=k1, b=b)
            lengths = np.bincount(rows, weights=tfs.astype(np.float64), minlength=len(raw))
            index._doc_lengths = lengths.astype(np.float32)
            index.doc_count = len(raw)
            index.avgdl = float(lengths.sum()) / len(raw) if len(raw) else 0.0
            order = np.argsort(pairs["term"], kind="stable")  # rows stay in order within a term
            sorted_terms = pairs["term"][order]
            new_term = np.flatnonzero(np.concatenate(([True], sorted_terms[1:] != sorted_terms[:-1])))
            index.terms = sorted_terms[new_term].astype(np.int64)
            index.starts = np.append(new_term, sorted_terms.size)
            index.row_ids = rows[order]
            index.tfs = tfs[order]
            return index

        def postings(self, term: object) -> tuple[np.ndarray, np.ndarray] | None:
            if not isinstance(term, int) or not self.terms.size:
                return None
            at = int(np.searchsorted(self.terms, term))
            if at >= self.terms.size or self.terms[at] != term:
                return None
            start, end = self.starts[at], self.starts[at + 1]
            return self.row_ids[start:end], self.tfs[start:end]

        def search(
            self, query_sparse_vectors: list[dict[int, float]], top_k: int, valid_mask: np.ndarray | None = None
        ) -> tuple[np.ndarray, np.ndarray]:
            return bm25_search(self, query_sparse_vectors, top_k, valid_mask=valid_mask)

        def build(self, *args: object, **kwargs: object) -> None:
            raise TypeError("an ArrayBM25Index is made by from_column")

    ArrayBM25Index = _ArrayBM25Index
    return ArrayBM25Index


ArrayBM25Index: Any = None


def bm25_search(
    index: SparseInvertedIndex, queries: list[dict[int, float]], top_k: int, valid_mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """SparseInvertedIndex.search over numpy arrays: the same scores bit for bit and the same order.

    The scalar code computes `(tf*(k1+1)) / (tf + k1*(1-b+b*dl/avgdl))` with `dl` a numpy
    float32, so (NumPy 2) the denominator and the quotient are float32 while `tf*(k1+1)` is a
    Python float; `idf * tf_norm * weight` stays float32 and scores add up term by term in
    query order. Rows are ranked by score, ties in the order they first got a score."""
    from milvus_lite.index.sparse_common import empty_results, validate_mask

    valid_mask = validate_mask(valid_mask, len(index._doc_lengths))
    nq = len(queries)
    all_ids, all_dists = empty_results(nq, top_k)
    if index.doc_count == 0:
        return all_ids, all_dists
    n_docs, k1, b = index.doc_count, index.k1, index.b
    avgdl = index.avgdl if index.avgdl > 0 else 1.0
    lengths = index._doc_lengths
    for qi, terms in enumerate(queries):
        if not terms:
            continue
        scores = np.zeros(lengths.size, dtype=np.float32)
        first = np.full(lengths.size, -1, dtype=np.int64)
        for position, (term, weight) in enumerate(terms.items()):
            posting = index.postings(term) if hasattr(index, "row_ids") else _postings(index, term)
            if posting is None:
                continue
            ids, tfs = posting
            df = ids.size  # the scalar index counts one posting per row holding the term
            idf = math.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)
            if valid_mask is not None:
                keep = valid_mask[ids]
                ids, tfs = ids[keep], tfs[keep]
            if ids.size == 0:
                continue
            dl = lengths[ids]
            denominator = tfs.astype(np.float32) + k1 * (1.0 - b + b * dl / avgdl)
            tf_norm = (tfs.astype(np.float64) * (k1 + 1.0)).astype(np.float32) / denominator
            scores[ids] += idf * tf_norm * weight
            fresh = first[ids] < 0
            first[ids[fresh]] = position
        touched = np.flatnonzero(first >= 0)
        if touched.size == 0:
            continue
        touched_scores = scores[touched]
        k = min(top_k, touched.size)
        if touched.size > k:  # every row that could tie the k-th best score stays in the sort
            kth = np.partition(touched_scores, touched.size - k)[touched.size - k]
            near = touched_scores >= kth
            touched, touched_scores = touched[near], touched_scores[near]
        order = np.lexsort((touched, first[touched], -touched_scores))[:k]
        all_ids[qi, :k] = touched[order]
        all_dists[qi, :k] = -touched_scores[order]
    return all_ids, all_dists


# ------------------------------------------------------------------ the sparse (BM25) search


def search_sparse(
    self: Collection,
    query_vectors: list,
    vector_field: str,
    top_k: int,
    metric_type: str,
    partition_names: list[str] | None,
    expr: str | None,
    output_fields: list[str] | None,
    timezone: str | None = None,
) -> list[list[dict]]:
    """milvus_lite Collection._search_sparse with cached live-row masks and numpy BM25."""
    original = _originals["sparse"]
    arguments = (query_vectors, vector_field, top_k, metric_type, partition_names, expr, output_fields, timezone)
    if partition_names:
        return original(self, *arguments)
    from milvus_lite.analyzer.sparse import bytes_to_sparse
    from milvus_lite.engine.projection import build_projection_plan, project_record
    from milvus_lite.index.sparse_factory import (
        _search_prepared_sparse_index,
        create_sparse_index,
        sparse_index_matches,
    )
    from milvus_lite.index.sparse_inverted import SparseInvertedIndex

    projection_plan = build_projection_plan(output_fields, self._schema, api_kind="search")
    sparse_spec = self._index_specs.get(vector_field)
    index_params = sparse_spec.build_params if sparse_spec else {}
    query_sparse = self._prepare_sparse_queries(query_vectors, vector_field)
    nq = len(query_sparse)
    compiled_filter = self._compile_filter(expr, timezone=timezone) if expr else None
    indexed_filter_plan = self._indexed_filter_plan(compiled_filter)
    candidates: list[list[tuple[float, Any, Any]]] = [[] for _ in range(nq)]
    seg_snapshot, delta_snap = self._read_snapshot()
    mt_deletes = self._memtable.delete_index_snapshot()
    mt_index = self._memtable.pk_index_snapshot()
    mt_pks = [pk for pk, _ in mt_index]
    mt_seqs = [position[2] for _, position in mt_index]
    # Empty segments hold no version of any key: left out, as the dense path leaves them (one cache entry for both).
    seg_snapshot = tuple(seg for seg in seg_snapshot if seg.num_rows > 0)
    entry = LIVE_ROWS.masks(State(seg_snapshot, delta_snap._map, mt_pks, mt_seqs, mt_deletes), _all_partitions())
    if entry is None:
        return original(self, *arguments)

    def search(index: object, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(index, SparseInvertedIndex) and type(index).search is _originals["bm25"]:
            return bm25_search(index, query_sparse, top_k, valid_mask=mask)
        return _search_prepared_sparse_index(index, query_sparse, top_k, valid_mask=mask)

    for seg, live in zip(seg_snapshot, entry.scoped, strict=True):
        table = seg.table
        if table is None or len(table) == 0:
            continue
        cached = seg.sparse_indexes.get(vector_field)
        if not sparse_index_matches(cached, metric_type, index_params):
            cached = create_sparse_index(metric_type, index_params)
            if metric_type == "BM25":
                arrays = _array_index_class().from_column(table.column(vector_field), cached.k1, cached.b)
                cached = arrays if arrays is not None else cached
            if not isinstance(cached, _array_index_class()):
                rows = table.column(vector_field).to_pylist()
                cached.build([bytes_to_sparse(r) if isinstance(r, bytes) else (r or {}) for r in rows])
            seg.sparse_indexes[vector_field] = cached
        valid = live
        if compiled_filter is not None:
            from milvus_lite.search.indexed_filter import evaluate_segment_filter

            valid = valid & evaluate_segment_filter(seg, compiled_filter, indexed_filter_plan)
        if not valid.any():
            continue
        for qi, local, dist in _found(*search(cached, valid)):
            candidates[qi].append((dist, seg.pks[local], (table, local)))

    # The memtable (small, mutable): rebuilt on each search, as milvus-lite does. A row written
    # after the snapshot above is newer than every stored version: only a tombstone can hide it.
    visible = dict(zip(zip(mt_pks, mt_seqs, strict=True), entry.mt_scoped.tolist(), strict=True))
    mt_rows: list[tuple[Any, dict, dict, int]] = []
    for pk, seq, record in self._memtable.active_record_snapshots(partition_names=None):
        shown = visible.get((pk, seq))
        if not (shown if shown is not None else not delta_snap.is_deleted(pk, seq)):
            continue
        raw = record.get(vector_field)
        mt_rows.append((pk, bytes_to_sparse(raw) if isinstance(raw, bytes) else (raw or {}), record, seq))
    if mt_rows:
        valid = np.ones(len(mt_rows), dtype=bool)
        if compiled_filter is not None:
            from milvus_lite.search.filter.eval.python_backend import _eval_row

            for i, (_, _, record, _) in enumerate(mt_rows):
                if not _eval_row(compiled_filter.ast, record):
                    valid[i] = False
        mt_sparse_index = create_sparse_index(metric_type, index_params)
        mt_sparse_index.build([row[1] for row in mt_rows], valid_mask=valid)
        for qi, local, dist in _found(*search(mt_sparse_index, None)):
            pk, _, record, seq = mt_rows[local]
            candidates[qi].append((dist, pk, (record, seq)))

    results: list[list[dict]] = []
    for per_query in candidates:
        best: dict[Any, tuple[int, tuple[float, Any, Any]]] = {}
        for candidate in per_query:
            _, pk, source = candidate
            if isinstance(source[0], dict):
                seq = int(source[1])
            else:
                seq = int(source[0].column("_seq")[source[1]].as_py())
            if pk not in best or seq > best[pk][0]:
                best[pk] = (seq, candidate)
        kept = [value[1] for value in best.values()]
        kept.sort(key=lambda c: c[0])
        hits: list[dict] = []
        for dist, pk, source in kept:
            if isinstance(source[0], dict):
                record = source[0]
            else:
                table, row = source
                record = {
                    name: table.column(name)[row].as_py()
                    for name in table.column_names
                    if name not in ("_seq", "_partition")
                }
            hits.append({"id": pk, "distance": dist, "entity": project_record(record, self._schema, projection_plan)})
            if len(hits) >= top_k:
                break
        results.append(hits)
    return results


def _all_partitions() -> str:
    from milvus_lite.constants import ALL_PARTITIONS

    return ALL_PARTITIONS


# ------------------------------------------------------------------ installing


def installed() -> bool:
    return bool(_originals)


def install() -> bool:
    """Patch milvus-lite's two search paths (once per process). False, and nothing patched, when
    milvus-lite is missing, of another version, or its functions were already replaced."""
    with _install_lock:
        if _originals:
            return True
        try:
            import milvus_lite
            from milvus_lite.engine import collection as engine
            from milvus_lite.index.sparse_inverted import SparseInvertedIndex
            from milvus_lite.search import executor_indexed
        except ImportError:
            return False
        version = str(getattr(milvus_lite, "__version__", ""))
        if not version.startswith(SUPPORTED):
            logger.info("milvus-lite %s: searches run unpatched (this speed-up knows %s)", version, SUPPORTED)
            return False
        dense = executor_indexed.execute_search_with_index
        if engine.execute_search_with_index is not dense or not hasattr(engine.Collection, "_search_sparse"):
            logger.info("milvus-lite's search functions were replaced by someone else: left as they are")
            return False
        _originals.update(dense=dense, sparse=engine.Collection._search_sparse, bm25=SparseInvertedIndex.search)
        engine.execute_search_with_index = search_with_index
        engine.Collection._search_sparse = search_sparse
        return True


def uninstall() -> None:
    """Put milvus-lite's own functions back (the tests compare both paths in one process)."""
    with _install_lock:
        if not _originals:
            return
        from milvus_lite.engine import collection as engine

        engine.execute_search_with_index = _originals["dense"]
        engine.Collection._search_sparse = _originals["sparse"]
        _originals.clear()
        LIVE_ROWS.clear()
        forget_bm25_indexes()


def forget_bm25_indexes() -> int:
    """Drop the BM25 indexes cached on the segments of every database open in this process (the
    next sparse search builds them again, on whichever path is installed then). Returns how many."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return 0
    dropped = 0
    for _, db, _ in list(server_manager_instance._servers.values()):
        for collection in list(db._collections.values()):
            for segment in list(collection._segment_cache.values()):
                dropped += len(segment.sparse_indexes)
                segment.sparse_indexes.clear()
    return dropped
