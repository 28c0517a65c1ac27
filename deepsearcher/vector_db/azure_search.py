"""Azure AI Search as a vector store, over its REST API (no SDK needed).

One collection is one search index (its name lower-cased, `_` → `-`, as Azure requires).
Each chunk is a document: `id`, `content` (the chunk), `index_text` (title + chunk,
searchable: the BM25 side of hybrid search; an index without it searches `content`), the
vector field (`vector_field`, default `content_vector`, as DeepSearcher created it),
`reference`, `metadata` (JSON text), `source_hash`, `source_chunks`. Azure keeps no free
metadata on an index, so each collection's description and embedding model live in a
small side index, `deepsearcher-collections`; the version marker of each collection (the source
versions a re-load hides, see `hide_versions`) in another, `deepsearcher-versions`, which
searches read around each query and filter on with `not search.in(source_hash, ...)`.
Indexes made by DeepSearcher (only `id`, `content`, `content_vector`) are searched as they
are: the document id stands in for the reference (and a changed source there is deleted
before its new version is stored: such an index cannot list a source's rows).

Scores are Azure's: cosine similarity mapped to 1 / (2 - cos) for vector search, the
RRF-fused score for hybrid.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypedDict

import httpx

from deepsearcher.config.api_keys import resolve_api_key
from deepsearcher.config.registry import register_provider
from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    ConfigurationError,
    RetrievalResult,
    VectorStoreError,
)
from deepsearcher.types.json import JSONObject
from deepsearcher.vector_db import _common as common
from deepsearcher.vector_db.base import (
    BaseVectorDB,
    SourceRecord,
    StoredChunk,
    normalize_collection_name,
)

logger = logging.getLogger(__name__)

API_VERSION = "2024-07-01"
#: Azure makes written documents searchable within about a second: how long a version switch
#: waits for them before moving the marker anyway (see `_wait_searchable`).
SEARCHABLE_WAIT_S = 30.0
POLL_S = 0.2
META_INDEX = "deepsearcher-collections"
VERSIONS_INDEX = "deepsearcher-versions"  # per collection: the hidden source versions and an epoch
SIDE_INDEXES = (META_INDEX, VERSIONS_INDEX)
PAGE = 1000


class _Field(TypedDict, total=False):
    """One field of an index definition, as the REST API returns it (the keys read here)."""

    name: str
    type: str
    dimensions: int


class _Index(TypedDict, total=False):
    """An index definition, as GET /indexes/{name} returns it (the keys read here)."""

    name: str
    fields: list[_Field]


class _MetaDoc(TypedDict, total=False):
    """A collection's row in META_INDEX."""

    description: str
    embedding_model: str


def index_name(collection: str) -> str:
    return collection.lower().replace("_", "-")


def _quote(value: str) -> str:
    """An OData string literal."""
    return "'" + value.replace("'", "''") + "'"


@register_provider("vector_db", env_var="AZURE_SEARCH_API_KEY")
class AzureSearch(BaseVectorDB):
    """Config: endpoint (else $AZURE_SEARCH_ENDPOINT), api_key (else $AZURE_SEARCH_API_KEY),
    index_name (the default collection, as in DeepSearcher), vector_field, api_version,
    timeout, hybrid (vector + BM25 when a query text is given, default true)."""

    def __init__(
        self,
        endpoint: str | None = None,
        index_name: str | None = None,
        api_key: str | None = None,
        vector_field: str | None = None,
        default_collection: str = "deepsearcher",
        api_version: str = API_VERSION,
        timeout: float = 30.0,
        hybrid: bool = True,
    ) -> None:
        super().__init__(index_name or default_collection)
        self.endpoint = (endpoint or os.environ.get("AZURE_SEARCH_ENDPOINT") or "").rstrip("/")
        if not self.endpoint.startswith(("http://", "https://")):
            raise ConfigurationError(
                "AzureSearch needs endpoint: https://<service>.search.windows.net "
                "(provide_settings.vector_db.config.endpoint or $AZURE_SEARCH_ENDPOINT)."
            )
        key = resolve_api_key(
            "AzureSearch",
            api_key,
            ["AZURE_SEARCH_API_KEY", "AZURE_SEARCH_KEY"],
            section="vector_db",
        )
        self.vector_field = vector_field or "content_vector"
        self.api_version = api_version
        self.hybrid = bool(hybrid)
        self._http = httpx.Client(
            base_url=self.endpoint,
            timeout=timeout,
            headers={"api-key": key or "", "Content-Type": "application/json"},
        )
        self._indexes: dict[str, _Index] = {}
        self._lock = threading.Lock()
        self._pin = threading.local()  # a search's hidden versions (`_common.search_pinned`)
        self._written: dict[str, tuple[int, frozenset[str]]] = {}  # the last marker written, per collection

    # ------------------------------------------------------------------ HTTP

    def _call(
        self,
        method: str,
        path: str,
        operation: str,
        collection: str | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        params = {"api-version": self.api_version, **kwargs.pop("params", {})}
        try:
            response = self._http.request(method, path, params=params, **kwargs)
        except httpx.HTTPError as exc:
            raise common.operation_failed(
                "AzureSearch",
                operation,
                collection,
                self.endpoint,
                str(exc) or type(exc).__name__,
            ) from exc
        if (
            response.status_code == 404
            and collection is not None
            and path.startswith(f"/indexes/{index_name(collection)}/")
        ):
            # the index was deleted since it was looked up (another client or process): not found, not a fault
            self._indexes.pop(collection, None)
            raise common.missing_collection(operation, collection, self.endpoint, [])
        if response.status_code >= 400 and response.status_code != 404:
            try:
                detail = response.json().get("error", {}).get("message") or response.text
            except ValueError:
                detail = response.text
            raise common.operation_failed(
                "AzureSearch",
                operation,
                collection,
                self.endpoint,
                f"HTTP {response.status_code}: {detail[:300]}",
            )
        return response

    def _index(self, name: str) -> _Index | None:
        if name not in self._indexes:
            response = self._call("GET", f"/indexes/{index_name(name)}", "describe index", name)
            if response.status_code == 404:
                return None
            self._indexes[name] = response.json()
        return self._indexes[name]

    def _fields(self, name: str) -> dict[str, _Field]:
        return {field["name"]: field for field in (self._index(name) or {}).get("fields", [])}

    def _meta(self, name: str) -> _MetaDoc:
        response = self._call(
            "GET",
            f"/indexes/{META_INDEX}/docs/{index_name(name)}",
            "read collection info",
            name,
        )
        return response.json() if response.status_code == 200 else {}

    def _write_meta(self, name: str, **values: object) -> None:
        if self._call("GET", f"/indexes/{META_INDEX}", "describe index").status_code == 404:
            fields = [{"name": "id", "type": "Edm.String", "key": True}] + [
                {"name": key, "type": "Edm.String"} for key in ("collection", "description", "embedding_model")
            ]
            self._call(
                "PUT",
                f"/indexes/{META_INDEX}",
                "create index",
                json={"name": META_INDEX, "fields": fields},
            )
        action = {
            "@search.action": "mergeOrUpload",
            "id": index_name(name),
            "collection": name,
            **values,
        }
        self._call(
            "POST",
            f"/indexes/{META_INDEX}/docs/index",
            "write collection info",
            name,
            json={"value": [action]},
        )

    # ------------------------------------------------------------------ collections

    def _exists(self, name: str) -> bool:
        return self._index(name) is not None

    def _require(self, name: str, operation: str) -> None:
        if not self._exists(name):
            existing = [info.collection_name for info in self.list_collections()]
            raise common.missing_collection(operation, name, self.endpoint, existing)

    def _read_info(self, name: str) -> CollectionInfo:
        vector = self._fields(name).get(self.vector_field) or {}
        meta = self._meta(name)
        return CollectionInfo(
            collection_name=name,
            description=meta.get("description") or "",
            dim=vector.get("dimensions"),
            embedding_model=meta.get("embedding_model") or None,
            extra={"fields": list(self._fields(name))},
        )

    def _create_collection(
        self,
        name: str,
        dim: int,
        description: str,
        embedding_model: str | None,
        **kwargs: object,
    ) -> None:
        fields = [
            {"name": "id", "type": "Edm.String", "key": True, "filterable": True},
            {"name": "content", "type": "Edm.String", "searchable": True},
            {"name": common.INDEX_TEXT, "type": "Edm.String", "searchable": True},
            {
                "name": self.vector_field,
                "type": "Collection(Edm.Single)",
                "searchable": True,
                "dimensions": dim,
                "vectorSearchProfile": "deepsearcher",
            },
            {"name": common.REFERENCE, "type": "Edm.String", "filterable": True},
            {"name": common.METADATA, "type": "Edm.String"},
            {"name": common.SOURCE_HASH, "type": "Edm.String", "filterable": True},
            {"name": common.SOURCE_CHUNKS, "type": "Edm.Int32"},
        ]
        vector_search = {
            "algorithms": [{"name": "hnsw", "kind": "hnsw", "hnswParameters": {"metric": "cosine"}}],
            "profiles": [{"name": "deepsearcher", "algorithm": "hnsw"}],
        }
        body = {
            "name": index_name(name),
            "fields": fields,
            "vectorSearch": vector_search,
        }
        self._call("PUT", f"/indexes/{index_name(name)}", "create index", name, json=body)
        self._indexes.pop(name, None)
        self._write_meta(name, description=description, embedding_model=embedding_model or "")

    def _open_existing(self, name: str, dim: int, description: str, embedding_model: str | None) -> None:
        info = self._read_info(name)
        common.check_embedding(info, dim, embedding_model)
        updates = common.info_updates(info, description, embedding_model)
        if updates:
            self._write_meta(name, **updates)

    def list_collections(self, dim: int | None = None) -> list[CollectionInfo]:
        listing = self._call("GET", "/indexes", "list indexes", params={"$select": "name"}).json().get("value", [])
        infos = []
        for entry in listing:
            if entry["name"] in SIDE_INDEXES:
                continue
            try:
                name = normalize_collection_name(entry["name"])
            except ConfigurationError:
                continue  # an index name that is no collection name of ours (e.g. starting with a digit)
            infos.append(self._read_info(name))
        return common.of_dim(infos, dim)

    def clear_db(self, collection: str | None = None) -> None:
        name = self._collection(collection)
        self._call("DELETE", f"/indexes/{index_name(name)}", "delete index", name)
        self._indexes.pop(name, None)
        self._written.pop(name, None)
        action = {"@search.action": "delete", "id": index_name(name)}
        for side in SIDE_INDEXES:
            if self._call("GET", f"/indexes/{side}", "describe index").status_code == 200:
                self._call(
                    "POST",
                    f"/indexes/{side}/docs/index",
                    "delete collection info",
                    name,
                    json={"value": [action]},
                )

    # ------------------------------------------------------------------ data

    def _document(self, chunk: Chunk, dim: int | None) -> JSONObject:
        source_hash, source_chunks = common.source_fields(chunk.metadata or {})
        return {
            "@search.action": "upload",
            "id": uuid.uuid4().hex,
            "content": chunk.text,
            common.INDEX_TEXT: chunk.index_text,
            self.vector_field: common.checked_vector(chunk, dim),
            common.REFERENCE: chunk.reference,
            common.METADATA: json.dumps(common.plain_json(chunk.metadata or {}), ensure_ascii=False),
            common.SOURCE_HASH: source_hash,
            common.SOURCE_CHUNKS: source_chunks,
        }

    def _insert(self, name: str, chunks: list[Chunk], batch_size: int, **kwargs: object) -> int:
        dim = self._read_info(name).dim
        fields = self._fields(name)
        inserted = 0
        for batch in common.batches(chunks, min(batch_size, PAGE)):
            documents = [
                {k: v for k, v in self._document(chunk, dim).items() if k.startswith("@") or k in fields}
                for chunk in batch
            ]
            reply = self._call(
                "POST",
                f"/indexes/{index_name(name)}/docs/index",
                "insert",
                name,
                json={"value": documents},
            )
            failed = [item for item in reply.json().get("value", []) if not item.get("status", True)]
            if failed:
                raise VectorStoreError(
                    f"AzureSearch refused {len(failed)} of {len(documents)} chunks in '{name}': "
                    f"{failed[0].get('errorMessage')}"
                )
            inserted += len(documents)
        return inserted

    def _hits(self, name: str, body: JSONObject, operation: str) -> list[dict[str, Any]]:
        return (
            self._call(
                "POST",
                f"/indexes/{index_name(name)}/docs/search",
                operation,
                name,
                json=body,
            )
            .json()
            .get("value", [])
        )

    def _result(self, hit: dict[str, Any], fields: dict[str, _Field]) -> RetrievalResult:
        metadata: Any = hit.get(common.METADATA) or "{}"
        try:
            metadata = json.loads(metadata) if isinstance(metadata, str) else dict(metadata)
        except ValueError:
            metadata = {"raw_metadata": metadata}
        reference = hit.get(common.REFERENCE) if common.REFERENCE in fields else hit.get("id")
        stored = {
            common.TEXT: hit.get("content", ""),
            common.REFERENCE: reference or "",
            common.METADATA: metadata,
        }
        return common.stored_result(stored, float(hit.get("@search.score", 0.0)))

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
        """`filter` is an OData expression (e.g. "reference eq 'a.txt'")."""
        if not getattr(self._pin, "on", False):  # between two reads of the version marker
            return common.search_pinned(
                self._pin,
                lambda: self._marker(name),
                lambda: self._search(name, vector, top_k, text, filter, mode, **kwargs),
            )
        fields = self._fields(name)
        mode = mode or ("hybrid" if self.hybrid and text else "dense")
        body: JSONObject = {
            "top": top_k,
            "select": ",".join(f for f in ("id", "content", common.REFERENCE, common.METADATA) if f in fields),
        }
        if mode in ("dense", "hybrid"):
            body["vectorQueries"] = [
                {
                    "kind": "vector",
                    "vector": list(vector),
                    "fields": self.vector_field,
                    # hybrid: more vector candidates than results, so that RRF can lift a chunk only
                    # BM25 finds above the vector side's own top_k (as Milvus and Qdrant fuse)
                    "k": top_k if mode == "dense" else max(top_k * 2, 20),
                }
            ]
        if mode in ("sparse", "hybrid"):
            if not text:
                raise VectorStoreError("Cannot run a BM25 (sparse) search: no query_text was given.")
            body["search"] = text
            body["searchFields"] = common.INDEX_TEXT if common.INDEX_TEXT in fields else "content"
        visible = self._visible(name, fields, filter)
        if visible:
            body["filter"] = visible
        return [self._result(hit, fields) for hit in self._hits(name, body, f"{mode} search")]

    def _all(self, name: str, select: list[str], filter: str | None = None) -> Iterator[dict[str, Any]]:
        fields = self._fields(name)
        skip = 0
        while True:
            body: JSONObject = {
                "search": "*",
                "top": PAGE,
                "skip": skip,
                "select": ",".join(f for f in select if f in fields),
            }
            if filter:
                body["filter"] = filter
            hits = self._hits(name, body, "list documents")
            yield from hits
            if len(hits) < PAGE:
                return
            skip += PAGE

    def delete_by_reference(self, collection: str | None, reference: str) -> int:
        name = self._collection(collection)
        self._require(name, "delete")
        ids = [hit["id"] for hit in self._all(name, ["id"], f"{common.REFERENCE} eq {_quote(reference)}")]
        self._delete(name, ids)
        return len(ids)

    def delete_ids(self, collection: str | None, ids: Sequence[int | str]) -> int:
        name = self._collection(collection)
        self._require(name, "delete")
        self._delete(name, [str(doc_id) for doc_id in ids])
        for start in range(0, len(ids), PAGE):  # gone from searches before the marker shows their version again
            values = ",".join(str(doc_id) for doc_id in ids[start : start + PAGE])
            self._wait_searchable(name, f"search.in(id, {_quote(values)}, ',')", lambda count, _: count == 0)
        return len(ids)

    def _wait_searchable(self, name: str, filter: str, ready: Callable[[int, JSONObject], bool]) -> None:
        """Poll until `ready(count, one hit)` holds for the documents matching `filter` as searches see
        them (Azure indexes in near real time), at most SEARCHABLE_WAIT_S: a marker moved earlier
        could show a version whose rows are not searchable yet (a gap) or deleted rows again."""
        deadline = time.monotonic() + SEARCHABLE_WAIT_S
        while True:
            body = {"search": "*", "filter": filter, "top": 1, "count": True, "select": common.SOURCE_CHUNKS}
            reply = self._call("POST", f"/indexes/{index_name(name)}/docs/search", "wait for indexing", name, json=body)
            payload = reply.json()
            hits = payload.get("value", [])
            if ready(int(payload.get("@odata.count") or 0), hits[0] if hits else {}):
                return
            if time.monotonic() > deadline:
                logger.warning("AzureSearch: '%s' not searchable after %.0f s; going on", filter, SEARCHABLE_WAIT_S)
                return
            time.sleep(POLL_S)

    def _delete(self, name: str, ids: list[str]) -> None:
        for start in range(0, len(ids), PAGE):
            actions = [{"@search.action": "delete", "id": doc_id} for doc_id in ids[start : start + PAGE]]
            self._call(
                "POST",
                f"/indexes/{index_name(name)}/docs/index",
                "delete",
                name,
                json={"value": actions},
            )

    def stored_chunks(self, collection: str | None, reference: str) -> list[StoredChunk] | None:
        """Every document of `reference` with its id, the pipeline's chunk_key / chunk_index (in its
        metadata JSON) and its version; None for an index DeepSearcher made (no reference field)."""
        name = self._collection(collection)
        self._require(name, "list chunks")
        fields = self._fields(name)
        if common.REFERENCE not in fields or common.SOURCE_HASH not in fields:
            return None
        rows = []
        select = ["id", common.METADATA, common.SOURCE_HASH]
        for hit in self._all(name, select, f"{common.REFERENCE} eq {_quote(reference)}"):
            try:
                metadata = json.loads(hit.get(common.METADATA) or "{}")
            except ValueError:
                metadata = {}
            index = metadata.get("chunk_index")
            key = str(metadata.get("chunk_key") or "")
            rows.append(
                StoredChunk(hit["id"], key, index if isinstance(index, int) else None, hit.get(common.SOURCE_HASH))
            )
        return rows

    # ------------------------------------------------------------------ versions

    def hide_versions(self, collection: str | None, hide: Iterable[str], show: Iterable[str] = ()) -> None:
        """The stored version marker, one document of the `deepsearcher-versions` index: the hidden
        versions and an epoch that grows at each change (see vector_db/_milvus_versions.py)."""
        name = self._collection(collection)
        if common.SOURCE_HASH in self._fields(name):
            for version in set(show) - set(hide):  # shown once searchable whole (or, deleted, gone)
                self._wait_searchable(
                    name,
                    f"{common.SOURCE_HASH} eq {_quote(version)}",
                    lambda count, hit: count == 0 or count >= common.as_count(hit.get(common.SOURCE_CHUNKS)),
                )
        with self._lock:
            # the last marker this client wrote may not be searchable yet (near real time): the newer one counts
            epoch, hidden = max(self._marker(name), self._written.get(name, (0, frozenset())), key=lambda m: m[0])
            hidden = (hidden - set(show)) | set(hide)
            if self._call("GET", f"/indexes/{VERSIONS_INDEX}", "describe index").status_code == 404:
                fields = [
                    {"name": "id", "type": "Edm.String", "key": True},
                    {"name": "collection", "type": "Edm.String"},
                    {"name": "hidden_versions", "type": "Edm.String"},
                    {"name": "versions_epoch", "type": "Edm.Int64"},
                ]
                body = {"name": VERSIONS_INDEX, "fields": fields}
                self._call("PUT", f"/indexes/{VERSIONS_INDEX}", "create index", json=body)
            marker = {
                "@search.action": "mergeOrUpload",
                "id": index_name(name),
                "collection": name,
                "hidden_versions": json.dumps(sorted(hidden)),
                "versions_epoch": epoch + 1,
            }
            self._call(
                "POST",
                f"/indexes/{VERSIONS_INDEX}/docs/index",
                "write version marker",
                name,
                json={"value": [marker]},
            )
            self._written[name] = (epoch + 1, frozenset(hidden))
            deadline = time.monotonic() + SEARCHABLE_WAIT_S
            while self._marker(name)[0] < epoch + 1 and time.monotonic() < deadline:
                time.sleep(POLL_S)  # every reader sees the move before the pipeline's next step

    def _marker(self, name: str) -> tuple[int, frozenset[str]]:
        """(epoch, hidden versions); none stored (a collection loaded before): nothing hidden."""
        response = self._call("GET", f"/indexes/{VERSIONS_INDEX}/docs/{index_name(name)}", "read version marker")
        if response.status_code != 200:
            return 0, frozenset()
        marker = response.json()
        return int(marker.get("versions_epoch") or 0), frozenset(json.loads(marker.get("hidden_versions") or "[]"))

    def _visible(self, name: str, fields: dict[str, _Field], filter: object) -> str | None:
        """The OData `filter` narrowed to the source versions not hidden."""
        hidden = self._pin.hidden if getattr(self._pin, "on", False) else self._marker(name)[1]
        if not hidden or common.SOURCE_HASH not in fields:
            return str(filter) if filter else None
        values = ",".join(sorted(hidden))  # hex hashes: no comma inside
        condition = f"not search.in({common.SOURCE_HASH}, {_quote(values)}, ',')"
        return f"({filter}) and {condition}" if filter else condition

    def list_sources(self, collection: str | None) -> dict[str, SourceRecord]:
        name = self._collection(collection)
        self._require(name, "list sources")
        tally = common.SourceTally()
        with_reference = common.REFERENCE in self._fields(name)
        for hit in self._all(name, ["id", common.REFERENCE, common.SOURCE_HASH, common.SOURCE_CHUNKS]):
            reference = hit.get(common.REFERENCE) if with_reference else hit.get("id")
            tally.add(
                reference or "",
                hit.get(common.SOURCE_HASH),
                hit.get(common.SOURCE_CHUNKS),
            )
        return tally.records()

    def close(self) -> None:
        self._http.close()
