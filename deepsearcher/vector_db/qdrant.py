"""Qdrant (a server, Qdrant Cloud, or qdrant-client's embedded local mode) as the vector store.

Each chunk is one point with a named dense vector ``dense`` (cosine) and a named sparse
vector ``bm25``. The sparse side is BM25 computed here: text is cut into lower-case
word tokens, each token is hashed to a uint32 index, and its value is the BM25
term-frequency part ``tf·(k1+1) / (tf + k1·(1 − b + b·len/avgdl))`` (k1=1.2, b=0.75);
Qdrant multiplies in the IDF itself (``modifier=IDF``), computed over the collection.
``avgdl`` is fixed per collection when it is created and stored with it, so every chunk
of a collection is normalised alike. A query is the same tokens with value 1. Hybrid
search prefetches the best dense and the best BM25 candidates and fuses them with
reciprocal rank fusion in one Query API call.

Payload per point: ``text`` (what the answer quotes), ``index_text`` (title + text, what
BM25 indexed), ``reference``, ``source_hash``, ``source_chunks`` and ``metadata``.

Local mode has no per-collection metadata (and servers before 1.16 have none either), so
the description, embedding model, dimension and avgdl of every collection live as one
point each in a reserved collection, ``_deepsearcher_meta``: the same code works for a
server and for a local folder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    ConfigurationError,
    RetrievalResult,
    StoreInUseError,
    VectorStoreError,
)
from deepsearcher.types.json import JSONObject
from deepsearcher.vector_db import _common as common
from deepsearcher.vector_db._common import (
    INDEX_TEXT,
    METADATA,
    REFERENCE,
    SOURCE_CHUNKS,
    SOURCE_HASH,
    TEXT,
)
from deepsearcher.vector_db.base import (
    BaseVectorDB,
    SourceRecord,
    StoredChunk,
    normalize_collection_name,
)

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models

logger = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "bm25"
META_COLLECTION = "_deepsearcher_meta"
#: The version marker's keys in a collection's metadata point (see `hide_versions`).
HIDDEN_VERSIONS, VERSIONS_EPOCH = "hidden_versions", "versions_epoch"

K1 = 1.2
B = 0.75
DEFAULT_AVGDL = 256.0  # tokens; a 1500-character chunk of English prose plus its title

# Letters and digits (no underscore), or one CJK character at a time.
_TOKEN = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+"
)


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens ("QZ-8841 closed" → ["qz", "8841", "closed"])."""
    return _TOKEN.findall(text.lower())


def token_index(token: str) -> int:
    """A stable uint32 for a token (Python's hash() changes between processes)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big")


def bm25_document_vector(
    text: str, avgdl: float = DEFAULT_AVGDL, k1: float = K1, b: float = B
) -> tuple[list[int], list[float]]:
    """(indices, values) of the saturated, length-normalised term frequencies of `text`."""
    tokens = tokenize(text)
    if not tokens:
        return [], []
    counts = Counter(token_index(token) for token in tokens)
    norm = k1 * (1 - b + b * len(tokens) / max(avgdl, 1.0))
    indices = sorted(counts)
    return indices, [counts[i] * (k1 + 1) / (counts[i] + norm) for i in indices]


def bm25_query_vector(text: str) -> tuple[list[int], list[float]]:
    """(indices, values) of a query: each distinct token once, with weight 1."""
    indices = sorted({token_index(token) for token in tokenize(text)})
    return indices, [1.0] * len(indices)


def _meta_id(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"deepsearcher:collection:{name}"))


def default_local_path() -> str:
    import platformdirs

    return str(Path(platformdirs.user_data_dir("deepsearcher")) / "qdrant")


@register_provider("vector_db", extra="qdrant", requires=("qdrant_client",))
class Qdrant(BaseVectorDB):
    """Qdrant store with dense, BM25 and hybrid (RRF) search.

    Where the data lives (first that is given): `location` (":memory:" or a URL),
    `url` (http://host:6333, or Qdrant Cloud's URL with `api_key`, else $QDRANT_API_KEY),
    `host` (+ `port`, `grpc_port`, `prefer_grpc`, `https`), `path` (a folder for the
    embedded local mode, or ":memory:"); nothing given: local mode in the user data
    directory (…/deepsearcher/qdrant). Local mode holds a folder lock: one process at a
    time, use a server for more.
    """

    def __init__(
        self,
        default_collection: str = "deepsearcher",
        location: str | None = None,
        url: str | None = None,
        host: str | None = None,
        port: int | None = 6333,
        grpc_port: int = 6334,
        prefer_grpc: bool = False,
        https: bool | None = None,
        api_key: str | None = None,
        prefix: str | None = None,
        timeout: int | None = None,
        path: str | None = None,
        hybrid: bool = True,
        bm25_avgdl: float = DEFAULT_AVGDL,
        candidates_per_side: int | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(default_collection)
        if normalize_collection_name(default_collection) == META_COLLECTION:
            raise ConfigurationError(
                f"'{META_COLLECTION}' is reserved for DeepSearcher's collection metadata; pick another name."
            )
        self._qdrant = require("qdrant_client", extra="qdrant", feature="the Qdrant vector store")
        from qdrant_client import models

        self._models = models
        self.hybrid = bool(hybrid)
        self.bm25_avgdl = float(bm25_avgdl)
        self.candidates_per_side = int(candidates_per_side) if candidates_per_side else None
        #: Source versions kept out of searches (local mode: the stored marker, read once per collection).
        self._hidden: dict[str, frozenset[str]] = {}
        self._pin = threading.local()  # a server search's hidden versions (`_common.search_pinned`)
        self._lock = threading.RLock()  # local mode is not thread-safe; the pipeline inserts from a writer thread
        self._avgdl: dict[str, float] = {}
        self._tuned: set[str] = set()

        connect: dict[str, Any] = {"timeout": timeout, **kwargs}
        if location == ":memory:" or path == ":memory:":
            self.location, self.is_local = ":memory:", True
            connect["location"] = ":memory:"
        elif location or url or host:
            self.is_local = False
            api_key = api_key or os.environ.get("QDRANT_API_KEY") or None
            if location:
                connect["location"] = location
            elif url:
                connect["url"] = url
            else:
                connect.update(host=host, port=port, grpc_port=grpc_port)
            connect.update(prefer_grpc=prefer_grpc, https=https, api_key=api_key, prefix=prefix)
            self.location = str(location or url or f"{host}:{port}")
        else:
            self.is_local = True
            folder = os.path.abspath(os.path.expanduser(path or default_local_path()))
            if os.path.isfile(folder):
                raise ConfigurationError(
                    f"Qdrant path {folder} is a file; local mode needs a folder (vector_db.config.path)."
                )
            os.makedirs(folder, exist_ok=True)
            self.location = folder
            connect["path"] = folder
        if self.is_local:
            connect.pop("timeout", None)
            connect["force_disable_check_same_thread"] = True  # access is serialised by self._lock
        self.client = self._connect(connect)

    # ------------------------------------------------------------------ connection

    def _connect(self, connect: JSONObject) -> Any:
        try:
            client = self._qdrant.QdrantClient(**{k: v for k, v in connect.items() if v is not None})
        except RuntimeError as exc:
            if "already accessed by another instance" in str(exc):
                raise StoreInUseError(
                    f"The Qdrant local folder {self.location} is in use by another process (qdrant-client's local "
                    "mode allows one at a time). Close that process, use another path, or run a Qdrant server "
                    "(vector_db.config.url: http://host:6333) for shared access."
                ) from exc
            raise VectorStoreError(f"Cannot open the Qdrant store at {self.location}: {exc}") from exc
        except Exception as exc:
            raise VectorStoreError(f"Cannot open the Qdrant store at {self.location}: {exc}") from exc
        if not self.is_local:
            try:
                client.get_collections()
            except Exception as exc:
                client.close()
                raise VectorStoreError(
                    f"Cannot connect to the Qdrant server at {self.location}: {_short(exc)}. Check that the server is "
                    "running and reachable, the url / host / port in vector_db.config, and the api_key."
                ) from exc
        return client

    def close(self) -> None:
        with self._lock:
            client, self.client = getattr(self, "client", None), None
            common.close_client(client, logger, "Qdrant")
            self._avgdl.clear()
            self._tuned.clear()

    @contextmanager
    def _op(self, operation: str, collection: str | None = None) -> Iterator[QdrantClient]:
        """Hold the lock and turn client failures into a VectorStoreError naming the operation."""
        with self._lock:
            if self.client is None:
                raise VectorStoreError(f"The Qdrant store at {self.location} is closed.")
            try:
                yield self.client
            except (VectorStoreError, ConfigurationError):
                raise
            except Exception as exc:
                if not _is_qdrant_failure(exc):
                    raise
                if collection is not None and _collection_gone(exc, collection):
                    # dropped since it was looked up (another request, or process on a server): a 404, not a fault
                    raise common.missing_collection(operation, collection, self.location, []) from exc
                raise common.operation_failed("Qdrant", operation, collection, self.location, _short(exc)) from exc

    def _collection(self, collection: str | None) -> str:
        name = super()._collection(collection)
        if name == META_COLLECTION:
            raise ConfigurationError(
                f"'{META_COLLECTION}' is reserved for DeepSearcher's collection metadata; pick another name."
            )
        return name

    def _tune_local(self, name: str) -> None:
        """Local mode commits SQLite once per point, each with an fsync (~10 ms on many disks:
        minutes for a large load). WAL with synchronous=NORMAL keeps every commit but syncs
        only at checkpoints; committed points survive a crash of this process. Best effort:
        qdrant-client internals may change, and then inserts are just slower."""
        if not self.is_local or name in self._tuned or self.location == ":memory:":
            return
        self._tuned.add(name)
        try:
            collection = self.client._client.collections.get(name)
            connection = getattr(getattr(collection, "storage", None), "storage", None)
            if isinstance(connection, sqlite3.Connection):
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
        except Exception:
            logger.debug(
                "could not tune the SQLite storage of local collection %s",
                name,
                exc_info=True,
            )

    # ------------------------------------------------------------------ collection metadata

    def _ensure_meta_collection(self) -> None:
        models = self._models
        with self._op("create the metadata collection") as client:
            if client.collection_exists(META_COLLECTION):
                return
            try:
                client.create_collection(
                    META_COLLECTION,
                    vectors_config=models.VectorParams(size=1, distance=models.Distance.DOT),
                )
            except Exception:
                if not client.collection_exists(META_COLLECTION):  # another process may have created it
                    raise

    def _read_meta(self, names: list[str]) -> dict[str, dict[str, Any]]:
        if not names:
            return {}
        with self._op("read collection metadata") as client:
            if not client.collection_exists(META_COLLECTION):
                return {}
            points = client.retrieve(
                META_COLLECTION,
                ids=[_meta_id(name) for name in names],
                with_payload=True,
                with_vectors=False,
            )
        return {str(p.payload.get("collection")): dict(p.payload or {}) for p in points if p.payload}

    def _write_meta(self, name: str, payload: JSONObject) -> None:
        self._ensure_meta_collection()
        point = self._models.PointStruct(id=_meta_id(name), vector=[1.0], payload={"collection": name, **payload})
        with self._op("write collection metadata", name) as client:
            client.upsert(META_COLLECTION, points=[point], wait=True)

    def _dense_size(self, name: str) -> int | None:
        with self._op("get_collection", name) as client:
            info = client.get_collection(name)
        vectors = info.config.params.vectors
        if isinstance(vectors, dict):
            params = vectors.get(DENSE) or (next(iter(vectors.values())) if len(vectors) == 1 else None)
        else:
            params = vectors
        return int(params.size) if params is not None and getattr(params, "size", None) else None

    def _info(self, name: str, meta: dict[str, Any] | None) -> CollectionInfo:
        meta = meta or {}
        dim = self._dense_size(name)
        if dim is None and meta.get("dim"):
            dim = int(meta["dim"])
        return CollectionInfo(
            collection_name=name,
            description=str(meta.get("description") or ""),
            dim=dim,
            embedding_model=meta.get("embedding_model") or None,
            extra={"bm25_avgdl": meta.get("bm25_avgdl")} if meta.get("bm25_avgdl") else {},
        )

    # ------------------------------------------------------------------ collections

    def _exists(self, name: str) -> bool:
        with self._op("collection_exists", name) as client:
            return bool(client.collection_exists(name))

    def _user_collections(self) -> list[str]:
        with self._op("get_collections") as client:
            names = [c.name for c in client.get_collections().collections]
        return sorted(name for name in names if name != META_COLLECTION)

    def _require(self, name: str, operation: str) -> None:
        if not self._exists(name):
            raise common.missing_collection(operation, name, self.location, self._user_collections())

    def _read_info(self, name: str) -> CollectionInfo:
        return self._info(name, self._read_meta([name]).get(name))

    def _collection_lock(self) -> AbstractContextManager[object]:
        return self._lock

    def _create_collection(
        self,
        name: str,
        dim: int,
        description: str,
        embedding_model: str | None,
        **kwargs: object,
    ) -> None:
        models = self._models
        with self._op("create_collection", name) as client:
            client.create_collection(
                name,
                vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
                sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            )
            if not self.is_local:  # local mode ignores (and warns about) payload indexes
                client.create_payload_index(name, REFERENCE, field_schema=models.PayloadSchemaType.KEYWORD)
        self._write_meta(
            name,
            {
                "description": description,
                "embedding_model": embedding_model or "",
                "dim": dim,
                "bm25_avgdl": self.bm25_avgdl,
            },
        )
        self._avgdl[name] = self.bm25_avgdl

    def _open_existing(self, name: str, dim: int, description: str, embedding_model: str | None) -> None:
        meta = self._read_meta([name]).get(name, {})
        info = self._info(name, meta)
        common.check_embedding(info, dim, embedding_model)
        updated = {**meta, **common.info_updates(info, description, embedding_model)}
        if not meta:  # created outside DeepSearcher: adopt it with today's settings
            updated.update(dim=info.dim or dim, bm25_avgdl=self.bm25_avgdl)
        if updated != meta:
            updated.pop("collection", None)
            self._write_meta(name, updated)

    def list_collections(self, dim: int | None = None) -> list[CollectionInfo]:
        names = self._user_collections()
        metas = self._read_meta(names)
        return common.of_dim([self._info(name, metas.get(name)) for name in names], dim)

    def clear_db(self, collection: str | None = None) -> None:
        name = self._collection(collection)
        with self._op("delete_collection", name) as client:
            if client.collection_exists(name):
                client.delete_collection(name)
            if client.collection_exists(META_COLLECTION):
                client.delete(
                    META_COLLECTION,
                    points_selector=self._models.PointIdsList(points=[_meta_id(name)]),
                    wait=True,
                )
        self._avgdl.pop(name, None)
        self._hidden.pop(name, None)

    # ------------------------------------------------------------------ versions

    def hide_versions(self, collection: str | None, hide: Iterable[str], show: Iterable[str] = ()) -> None:
        """The stored version marker, in the collection's metadata point: the hidden versions and an
        epoch that grows at each change (see vector_db/_milvus_versions.py for the protocol)."""
        name = self._collection(collection)
        with self._lock:
            meta = self._read_meta([name]).get(name, {})
            hidden = (frozenset(meta.get(HIDDEN_VERSIONS) or ()) - set(show)) | set(hide)
            meta = {key: value for key, value in meta.items() if key != "collection"}
            epoch = int(meta.get(VERSIONS_EPOCH) or 0) + 1
            self._write_meta(name, {**meta, HIDDEN_VERSIONS: sorted(hidden), VERSIONS_EPOCH: epoch})
            self._hidden[name] = hidden

    def _marker(self, name: str) -> tuple[int, frozenset[str]]:
        meta = self._read_meta([name]).get(name, {})
        return int(meta.get(VERSIONS_EPOCH) or 0), frozenset(meta.get(HIDDEN_VERSIONS) or ())

    def _hidden_versions(self, name: str) -> frozenset[str]:
        return common.hidden_versions(self._pin, self._hidden, name, lambda: self._marker(name)[1])

    def _visible(self, name: str, query_filter: models.Filter | None) -> models.Filter | None:
        """`query_filter` narrowed to the source versions not hidden."""
        hidden = self._hidden_versions(name)
        if not hidden:
            return query_filter
        models = self._models
        hide = models.FieldCondition(key=SOURCE_HASH, match=models.MatchAny(any=sorted(hidden)))
        if query_filter is None:
            return models.Filter(must_not=[hide])
        return models.Filter(must=[query_filter], must_not=[hide])

    def stored_chunks(self, collection: str | None, reference: str) -> list[StoredChunk] | None:
        """Every point of `reference` with its id and the pipeline's chunk_key / chunk_index."""
        name = self._collection(collection)
        self._require(name, "list chunks")
        rows: list[StoredChunk] = []
        offset = None
        while True:
            with self._op("scroll", name) as client:
                points, offset = client.scroll(
                    name,
                    scroll_filter=self._reference_filter(reference),
                    limit=1000,
                    offset=offset,
                    with_payload=[SOURCE_HASH, METADATA],
                    with_vectors=False,
                )
            for point in points:
                payload = point.payload or {}
                metadata = payload.get(METADATA) or {}
                index = metadata.get("chunk_index")
                index = index if isinstance(index, int) else None
                key = str(metadata.get("chunk_key") or "")
                point_id = str(point.id) if isinstance(point.id, uuid.UUID) else point.id  # we store str uuids
                rows.append(StoredChunk(point_id, key, index, payload.get(SOURCE_HASH)))
            if offset is None:
                return rows

    def delete_ids(self, collection: str | None, ids: Sequence[int | str]) -> int:
        name = self._collection(collection)
        self._require(name, "delete")
        if ids:
            with self._op("delete", name) as client:
                client.delete(name, points_selector=self._models.PointIdsList(points=list(ids)), wait=True)
        return len(ids)

    # ------------------------------------------------------------------ data

    def _collection_avgdl(self, name: str) -> float:
        if name not in self._avgdl:
            meta = self._read_meta([name]).get(name, {})
            self._avgdl[name] = float(meta.get("bm25_avgdl") or self.bm25_avgdl)
        return self._avgdl[name]

    def _point(self, chunk: Chunk, dim: int | None, avgdl: float) -> models.PointStruct:
        vector = common.checked_vector(chunk, dim)
        metadata = common.plain_json(chunk.metadata or {})
        source_hash, source_chunks = common.source_fields(metadata)
        index_text = chunk.index_text
        payload: JSONObject = {
            TEXT: chunk.text,
            REFERENCE: chunk.reference,
            SOURCE_HASH: source_hash,
            SOURCE_CHUNKS: source_chunks,
            METADATA: metadata,
        }
        if index_text != chunk.text:
            payload[INDEX_TEXT] = index_text
        indices, values = bm25_document_vector(index_text, avgdl)
        vectors: dict[str, models.Vector] = {
            DENSE: vector,
            SPARSE: self._models.SparseVector(indices=indices, values=values),
        }
        return self._models.PointStruct(id=str(uuid.uuid4()), vector=vectors, payload=payload)

    def _insert(self, name: str, chunks: list[Chunk], batch_size: int, **kwargs: object) -> int:
        dim = self._dense_size(name)
        avgdl = self._collection_avgdl(name)
        with self._lock:
            self._tune_local(name)
        inserted = 0
        for batch in common.batches(chunks, batch_size):
            points = [self._point(chunk, dim, avgdl) for chunk in batch]
            with self._op("upsert", name) as client:
                client.upsert(name, points=points, wait=True)
            inserted += len(points)
        return inserted

    def _reference_filter(self, reference: str) -> models.Filter:
        models = self._models
        return models.Filter(must=[models.FieldCondition(key=REFERENCE, match=models.MatchValue(value=reference))])

    def has_documents(self, collection: str | None) -> bool:
        return self.count(collection) > 0

    def count(self, collection: str | None = None, filter: object = None) -> int:
        """Number of chunks in a collection (matching a Qdrant `Filter` or {field: value} when given)."""
        name = self._collection(collection)
        self._require(name, "count")
        with self._op("count", name) as client:
            return int(client.count(name, count_filter=self._filter(filter), exact=True).count)

    def delete_by_reference(self, collection: str | None, reference: str) -> int:
        name = self._collection(collection)
        self._require(name, "delete")
        selector = self._reference_filter(reference)
        with self._op("delete", name) as client:
            self._tune_local(name)
            matching = int(client.count(name, count_filter=selector, exact=True).count)
            if matching:
                client.delete(
                    name,
                    points_selector=self._models.FilterSelector(filter=selector),
                    wait=True,
                )
        return matching

    def list_sources(self, collection: str | None) -> dict[str, SourceRecord]:
        name = self._collection(collection)
        self._require(name, "list sources")
        tally = common.SourceTally()
        offset = None
        while True:
            with self._op("scroll", name) as client:
                points, offset = client.scroll(
                    name,
                    limit=1000,
                    offset=offset,
                    with_payload=[REFERENCE, SOURCE_HASH, SOURCE_CHUNKS],
                    with_vectors=False,
                )
            for point in points:
                payload = point.payload or {}
                tally.add(
                    str(payload.get(REFERENCE, "")),
                    payload.get(SOURCE_HASH),
                    payload.get(SOURCE_CHUNKS),
                )
            if offset is None:
                break
        return tally.records()

    # ------------------------------------------------------------------ search

    def _filter(self, value: object) -> models.Filter | None:
        """A Qdrant `Filter` as given, or {field: value, ...} as exact matches on payload fields."""
        if value is None or value == "" or value == {}:
            return None
        models = self._models
        if isinstance(value, models.Filter):
            return value
        if isinstance(value, dict):
            return models.Filter(
                must=[
                    models.FieldCondition(key=str(key), match=models.MatchValue(value=val))
                    for key, val in value.items()
                ]
            )
        raise ConfigurationError(
            "Qdrant filters are a qdrant_client.models.Filter or a dict of payload field → value, not "
            f"{type(value).__name__} "
            f"({value!r})."
        )

    def _search(
        self,
        name: str,
        vector: list[float],
        top_k: int,
        text: str,
        filter: object,
        mode: str | None,
        **kwargs: object,
    ) -> list[RetrievalResult]:
        """Dense, BM25 or hybrid (fused by RRF) search; `filter`: a Qdrant Filter or {field: value}."""
        if not self.is_local and not getattr(self._pin, "on", False):
            return common.search_pinned(
                self._pin,
                lambda: self._marker(name),
                lambda: self._search(name, vector, top_k, text, filter, mode, **kwargs),
            )
        indices, values = bm25_query_vector(text) if text else ([], [])
        if mode is None:
            mode = "hybrid" if self.hybrid and indices else "dense"
        if mode == "sparse" and not indices:
            reason = "no query_text was given" if not text else "query_text has no word tokens"
            raise VectorStoreError(f"Cannot run a BM25 (sparse) search: {reason}.")
        if mode == "hybrid" and not indices:
            mode = "dense"
        models = self._models
        query_filter = self._visible(name, self._filter(filter))
        dense = [float(x) for x in vector]
        sparse = models.SparseVector(indices=indices, values=values)
        with self._op(f"{mode} search", name) as client:
            if mode == "dense":
                response = client.query_points(
                    name,
                    query=dense,
                    using=DENSE,
                    limit=top_k,
                    query_filter=query_filter,
                    with_payload=True,
                )
            elif mode == "sparse":
                response = client.query_points(
                    name,
                    query=sparse,
                    using=SPARSE,
                    limit=top_k,
                    query_filter=query_filter,
                    with_payload=True,
                )
            else:
                limit = max(self.candidates_per_side or max(top_k * 2, 20), top_k)
                response = client.query_points(
                    name,
                    prefetch=[
                        models.Prefetch(query=dense, using=DENSE, limit=limit, filter=query_filter),
                        models.Prefetch(query=sparse, using=SPARSE, limit=limit, filter=query_filter),
                    ],
                    query=models.FusionQuery(fusion=models.Fusion.RRF),
                    limit=top_k,
                    with_payload=True,
                )
        return [common.stored_result(point.payload or {}, float(point.score)) for point in response.points]


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


def _collection_gone(exc: BaseException, name: str) -> bool:
    """Qdrant's words for a missing collection: local mode "Collection kb not found", the server's
    404 "Collection `kb` doesn't exist!"."""
    text = str(exc)
    return bool(re.search(rf"Collection [`'\"]?{re.escape(name)}[`'\"]? (?:not found|doesn't exist)", text))


def _is_qdrant_failure(exc: BaseException) -> bool:
    """qdrant-client, HTTP and gRPC errors (as opposed to programming errors in this module)."""
    module = type(exc).__module__ or ""
    return module.startswith(("qdrant_client", "httpx", "httpcore", "grpc")) or isinstance(
        exc, (ConnectionError, TimeoutError, ValueError, RuntimeError)
    )
