"""Milvus (server or embedded Milvus Lite) as the vector store, with dense + BM25 hybrid search.

One code path serves both: a ``*.db`` path runs Milvus Lite in-process (in milvus-lite 3.x
the ``.db`` path is a directory), an ``http(s)://`` uri talks to a Milvus server.

Each collection stores, per chunk: the dense ``embedding`` (COSINE), ``text`` (the chunk
as shown to a reader), ``index_text`` (title + chunk, analysed and turned into the BM25
``sparse`` vector by a Milvus function), ``reference``, ``source_hash`` and
``source_chunks`` (so listing ingested sources never reads chunk bodies) and a JSON
``metadata`` (title, wider_text, ...). The description, embedding model and dimension
live in collection *properties*, because Milvus Lite drops the schema description; where
a server drops properties too (the milvus-lite 2.5 engine) they live in a side collection
(`_milvus_meta`).

What the server supports is asked once per connection (`_milvus_capabilities`): a server
without BM25 functions (Milvus < 2.5) gets dense-only collections and one warning.

Consistency (figures from `benchmarks/consistency.py` on a Milvus 2.3.5 server): reads that
follow our own writes (counts, the chunks and sources already stored, collection info,
delete-then-insert replacement) are Strong: they must also see what another or a crashed
process wrote, and right after a delete a count at Bounded or Session still saw the rows.
Searches ask for Session explicitly: they see this process's own writes (a file just loaded,
then asked about: Bounded missed it every time) and wait for nothing else, where Strong
waits for the next time tick (~200 ms a search). Collections are still *created* Strong,
because pymilvus sends a query_iterator (the listings of sources and stored chunks) at the
collection's own level whatever level is asked for; only requests that name no level use it.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from deepsearcher.config.registry import register_provider
from deepsearcher.graph import LinkSettings, SpreadSettings, follow_links, normalise, spread, title_key
from deepsearcher.graph.feedback import FeedbackSettings, with_feedback
from deepsearcher.graph.spread import first_reads
from deepsearcher.graph.title_rows import TitleRows
from deepsearcher.types import (
    Chunk,
    CollectionInfo,
    ConfigurationError,
    RetrievalResult,
    StoreInUseError,
    VectorStoreError,
)
from deepsearcher.types.errors import CollectionNotFoundError, cause_chain
from deepsearcher.types.json import JSONObject
from deepsearcher.vector_db import _common as common
from deepsearcher.vector_db import _milvus_lite as lite
from deepsearcher.vector_db._common import (
    INDEX_TEXT,
    METADATA,
    REFERENCE,
    SOURCE_CHUNKS,
    SOURCE_HASH,
    TEXT,
)
from deepsearcher.vector_db._milvus_capabilities import (
    PROBE_PREFIX,
    Capabilities,
    detect,
)
from deepsearcher.vector_db._milvus_meta import META_COLLECTION, MetaTable
from deepsearcher.vector_db._milvus_versions import MARKER_COLLECTION, RETRIES, VersionMarker
from deepsearcher.vector_db.base import BaseVectorDB, SourceRecord, StoredChunk
from deepsearcher.vector_db.word_segmentation import segment_chinese

if TYPE_CHECKING:
    from pymilvus import CollectionSchema, MilvusClient
    from pymilvus.client.abstract import BaseRanker
    from pymilvus.milvus_client.index import IndexParams

logger = logging.getLogger(__name__)

# Field names (besides those of every store, in _common).
PK = "id"
EMBEDDING = "embedding"
SPARSE = "sparse"

# Collection properties (Milvus Lite keeps these; it drops the schema description).
PROP_DESCRIPTION = "deepsearcher.description"
PROP_MODEL = "deepsearcher.embedding_model"
PROP_DIM = "deepsearcher.dim"
PROP_ANALYZER = "deepsearcher.analyzer"  # the BM25 analyzer_params the collection was created with
INFO_PROPERTIES = {"description": PROP_DESCRIPTION, "embedding_model": PROP_MODEL}

VARCHAR_MAX = 65535  # bytes
HASH_MAX = 256
JSON_MAX = 60000  # bytes; Milvus caps a JSON value at 64 KiB
BM25_FUNCTION = "index_text_bm25"
RANKERS = ("weighted", "rrf")
LITE_ANALYZERS = ("standard", "jieba")
# Punctuation jieba emits as tokens (the standard tokenizer never does).
_PUNCTUATION = (
    [" ", "\t", "\n"] + list(".,;:!?()[]{}<>\"'`-_/\\|@#$%^&*+=~") + list("，。、；：？！“”‘’（）《》【】…—·")
)
#: New collections: jieba splits Chinese into words and keeps English words whole; lowercase
#: (a Milvus server needs the filter, Milvus Lite always lowercases) and punctuation dropped.
#: English BM25 recall measured equal to `standard` (benchmarks/retrieval.py). Existing
#: collections keep the analyzer their schema was created with.
DEFAULT_ANALYZER: JSONObject = {
    "tokenizer": "jieba",
    "filter": ["lowercase", {"type": "stop", "stop_words": _PUNCTUATION}],
}
#: Marks analyzer_params whose text we cut into Chinese words before the tokenizer sees it
#: (Milvus Lite ignores the key; inserts and searches read it from the schema).
SEGMENTED_BY = "deepsearcher.segmented_by"
#: New Milvus Lite collections: the same tokens as DEFAULT_ANALYZER for Chinese and English
#: (jieba's cut, done in `word_segmentation.py`, then the regex tokenizer), without running
#: Milvus Lite's Python jieba tokenizer on every English word (see that module's docstring).
LITE_DEFAULT_ANALYZER: JSONObject = {"tokenizer": "standard", SEGMENTED_BY: "jieba"}
STRONG = "Strong"  # consistency for reads that must see our own writes
SESSION = "Session"  # searches: this client's writes are visible, nothing else is waited for
#: search_consistency value that keeps the collection's own level (as created).
COLLECTION_LEVEL = "collection"


PING_REFUSAL = "Too many pings"
#: Milvus Lite's in-process gRPC server keeps gRPC's default ping policy (at most one ping per
#: 5 minutes without data), while pymilvus pings every 10 s: after ~2.5 idle minutes (a slow
#: local LLM's answer) the server sent GOAWAY "too_many_pings" and gRPC's C core printed it on
#: the terminal, past GRPC_VERBOSITY=ERROR. Pinging an in-process server at that pace is harmless.
LITE_GRPC_OPTIONS = {"grpc.keepalive_time_ms": 300_000}
PING_RETRY_DELAYS = (0.5, 1.0, 2.0)
#: milvus-lite's refusal to flush replayed deletes older than its manifest (see `Milvus.flush`).
STALE_SEQ = "current_seq is monotonic"
#: A primary key no row has (auto ids are positive): its tombstone matches nothing.
NEVER_AN_ID = -1


_T = TypeVar("_T")


def _mentions(exc: BaseException, text: str) -> bool:
    """Whether `text` appears in `exc` or in any exception it was raised from (gRPC details
    sit in the chain under pymilvus' generic "Fail connecting to server")."""
    return any(text in str(seen) for seen in cause_chain(exc))


def _with_ping_retries(connect: Callable[[], _T]) -> _T:
    """Connect, retrying a few times (3.5 s in all) only when the server refused the channel
    for pinging too often: the milvus-lite 2.5 engine does that to a client's first channel
    right after it starts. Any other failure (server down, bad token) is raised at once."""
    for delay in PING_RETRY_DELAYS:
        try:
            return connect()
        except Exception as exc:
            if not _mentions(exc, PING_REFUSAL):
                raise
            logger.info("Milvus refused the connection (%s); retrying in %.1f s", PING_REFUSAL, delay)
            time.sleep(delay)
    return connect()


@dataclass(frozen=True)
class _Schema:
    """What inserts and searches need to know of a collection's schema, read once."""

    names: set[str]
    #: Chinese runs of index_text (and of BM25 queries) are cut into words here first.
    segmented: bool

    @classmethod
    def of(cls, description: dict[str, Any]) -> _Schema:
        fields = description.get("fields", [])
        segmented = False
        for field in fields:
            if field.get("name") == INDEX_TEXT:
                params = (field.get("params") or {}).get("analyzer_params") or {}
                if isinstance(params, str):
                    params = json.loads(params)
                segmented = isinstance(params, dict) and SEGMENTED_BY in params
        return cls({field["name"] for field in fields}, segmented)


class _DropMvccWarning(logging.Filter):
    """query_iterator warns on every call against Milvus Lite that it falls back to a
    client-side timestamp; that is expected there and not actionable."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "mvccTs" not in record.getMessage()


logging.getLogger("pymilvus.client.iterator.query_iterator").addFilter(_DropMvccWarning())


def fit_bytes(text: str, limit: int = VARCHAR_MAX) -> str:
    """`text` cut to at most `limit` UTF-8 bytes without splitting a character."""
    if len(text) * 4 <= limit:
        return text
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def _json_safe(metadata: JSONObject) -> JSONObject:
    """Metadata as plain JSON (paths, dates, ... become strings), kept under JSON_MAX bytes."""
    safe = common.plain_json(metadata)
    size = len(json.dumps(safe, ensure_ascii=False).encode("utf-8"))
    if size <= JSON_MAX:
        return safe
    # Shrink the longest strings first (wider_text is normally the culprit).
    for key in sorted(safe, key=lambda k: -len(str(safe[k]))):
        if size <= JSON_MAX:
            break
        value = safe[key]
        for _ in range(4):  # escapes make the JSON longer than the text: cut, measure, repeat
            if not isinstance(value, str) or not value or size <= JSON_MAX:
                break
            raw = len(value.encode("utf-8"))
            encoded = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
            target = encoded - (size - JSON_MAX) - 64
            value = fit_bytes(value, max(0, int(target * raw / encoded)))
            safe[key] = value
            size = len(json.dumps(safe, ensure_ascii=False).encode("utf-8"))
    if size > JSON_MAX:  # large nested values: keep what a reader needs
        safe = {
            k: v for k, v in safe.items() if k in ("title", "source_chunks", "source_hash", "chunk_index", "chunk_key")
        }
    return safe


#: Hits of the ranked search the entity links start from and re-rank (see deepsearcher/graph/links.py).
LINK_CANDIDATES = 20
#: Chunks one linked-title query reads back, at most.
LINKED_ROWS = 200
#: The chunk's title key (deepsearcher.graph.title_key): what entity links look up.
TITLE_KEY = "title_key"
TITLE_KEY_MAX = 512
#: Rows per page when listing a collection's sources: Milvus's largest page. Every page is a
#: query that scans the collection (pages of 1,000 made an unchanged re-load of 8,000 chunks
#: scan it 9 times, 1.5 s of its 2-3 s), so fewer pages keep the re-load short.
LIST_BATCH = 16384
#: The collection `rebuild_graph` copies rows into before it takes the original's name.
GRAPH_REBUILD_SUFFIX = "__graph_rebuild"
#: Operations (`_op` labels) that change what a Lite database holds.
WRITE_OPERATIONS = frozenset(
    {"insert", "upsert", "delete", "drop_collection", "rename_collection", "create_collection"}
)
#: Ways to walk the entity graph (see Milvus.graph_walk).
GRAPH_WALKS = ("links", "ppr")


def quote(value: str) -> str:
    """A Milvus filter string literal."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def analyzer_params(analyzer: str | JSONObject) -> JSONObject:
    """Milvus analyzer_params for a name ("default", "standard", "english", "jieba", ...) or a dict."""
    if isinstance(analyzer, dict):
        return analyzer
    if analyzer == "default":
        return DEFAULT_ANALYZER
    if analyzer in ("standard", "jieba"):
        return {"tokenizer": analyzer}
    return {"type": analyzer}  # built-in analyzers of a Milvus server ("english", "chinese")


def _quiet_jieba() -> None:
    """Milvus Lite runs jieba in this process, and jieba logs its dictionary loading at DEBUG
    to stderr through its own handler: keep that out of the CLI's output."""
    try:
        import jieba
    except ImportError:  # only the jieba analyzer needs it; Milvus Lite names it when it does
        return
    jieba.setLogLevel(logging.WARNING)


def _exc_message(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(message)


@register_provider("vector_db", requires=("pymilvus",))
class Milvus(BaseVectorDB):
    """Milvus / Milvus Lite store with dense, BM25 and hybrid (weighted or RRF) search.

    uri: None → ``milvus.db`` in the user data directory; a path ending in ``.db`` →
    Milvus Lite in this process (one process per database); ``http(s)://host:19530`` →
    a Milvus server (with token / user / password / db).

    Hybrid search runs a dense (COSINE) and a BM25 search of `candidates_per_side`
    results each (None: ``max(2 * top_k, 20)``) and fuses them with Milvus's
    WeightedRanker (`weights` = dense, BM25; scores normalised by Milvus: (1 + cos) / 2
    and 2·atan(bm25)/π) or, with ``ranker="rrf"``, RRFRanker(`rrf_k`). The defaults
    (weighted 0.6/0.4, 100 candidates) won `benchmarks/retrieval.py` on HotpotQA and
    MuSiQue samples: Recall@5 above both dense and BM25 alone on both, which no RRF
    setting managed on MuSiQue.
    """

    #: pymilvus connection options a config may pass through (TLS, keep-alive, gRPC tuning).
    CONNECTION_OPTIONS = frozenset(
        {
            "timeout",
            "secure",
            "server_pem_path",
            "server_name",
            "client_pem_path",
            "client_key_path",
            "ca_pem_path",
            "keep_alive",
            "grpc_options",
            "alias",
            "db_name",
        }
    )

    @classmethod
    def request_parameters(cls) -> frozenset[str]:
        """What `**kwargs` may hold: the connection options pymilvus takes; any other key is a typo
        (checked before the store is built, see deepsearcher/app/provider_options.py)."""
        return cls.CONNECTION_OPTIONS

    def __init__(
        self,
        default_collection: str = "deepsearcher",
        uri: str | None = None,
        token: str = "root:Milvus",
        user: str = "",
        password: str = "",
        db: str = "default",
        hybrid: bool = True,
        analyzer: str | dict[str, Any] = "default",
        rrf_k: int = 10,
        candidates_per_side: int | None = 100,
        index_type: str = lite.AUTO_INDEX,
        ranker: str = "weighted",
        weights: tuple[float, float] | list[float] = (0.6, 0.4),
        index_params: dict[str, Any] | None = None,
        return_embedding: bool = False,
        search_consistency: str | None = SESSION,
        index_switch_rows: int = lite.HNSW_SWITCH_ROWS,
        graph: bool = True,
        graph_walk: str = "ppr",
        graph_feedback: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(default_collection)
        #: Follow entity links from the top hits to the chunks they name (deepsearcher/graph):
        #: the second hop of multi-hop questions; `search_data(..., links=False)` skips it per call.
        self.graph = _as_bool(graph)
        self.link_settings = LinkSettings()
        #: How the graph is walked: "ppr" (personalized PageRank truncated after two hops, with
        #: hub damping, deepsearcher/graph/spread.py; the default: it beat one step on HotpotQA,
        #: MuSiQue and the held-out 2Wiki set, benchmarks/retrieval.py) or "links" (one step,
        #: deepsearcher/graph/links.py, the previous default).
        if graph_walk not in GRAPH_WALKS:
            raise ConfigurationError(
                f"vector_db.config.graph_walk must be one of {', '.join(GRAPH_WALKS)}, not {graph_walk!r}."
            )
        self.graph_walk = graph_walk
        self.spread_settings = SpreadSettings()
        #: After the walk, a BM25 search for the question plus the names its best chunks mention,
        #: fused in (deepsearcher/graph/feedback.py: the chunk that mentions a bridge name rather
        #: than being titled by it); on with the graph, where the collection has BM25.
        self.graph_feedback = _as_bool(graph_feedback)
        self.feedback_settings = FeedbackSettings()
        #: The rows each title key names, kept until this Lite database's next write (graph/title_rows.py).
        self._title_rows = TitleRows()
        #: Consistency level of searches (see the module docstring): "Session" (default) sees this
        #: process's own writes; "Strong" also sees everyone else's but waits ~200 ms a search on a
        #: server; "Bounded" / "Eventually" may miss recent writes; "collection" uses the level
        #: the collection was created with (Strong for collections made here).
        level = str(search_consistency or SESSION)
        self._search_level = {} if level == COLLECTION_LEVEL else {"consistency_level": level}
        #: Put each hit's stored vector in RetrievalResult.embedding (as DeepSearcher did);
        #: off by default (384+ floats per hit); `search_data(..., with_embedding=True)` asks per call.
        self.return_embedding = _as_bool(return_embedding)
        self._metrics: dict[str, str] = {}
        self.hybrid = _as_bool(hybrid)
        self.analyzer = analyzer
        self.rrf_k = int(rrf_k)
        self.candidates_per_side = int(candidates_per_side) if candidates_per_side else None
        self.index_type = str(index_type).upper()
        self.index_params = dict(index_params or {})
        #: index_type AUTO on Milvus Lite: rows from which a collection's dense index is HNSW (see fit_index).
        self.index_switch_rows = int(index_switch_rows)
        if ranker not in RANKERS:
            raise ConfigurationError(
                f"Unknown Milvus ranker '{ranker}' (vector_db.config.ranker). Allowed values: {', '.join(RANKERS)}."
            )
        self.ranker = ranker
        self.weights = (float(weights[0]), float(weights[1]))
        self._loaded: set[str] = set()
        self._fields: dict[str, _Schema] = {}
        #: Source versions kept out of searches, per collection (see BaseVectorDB.hide_versions).
        self._hidden: dict[str, frozenset[str]] = {}
        self._hidden_lock = threading.Lock()
        #: On a server: the hidden versions this thread's current search was pinned to (see `_pinned_search`).
        self._pin = threading.local()
        self._markers: VersionMarker | None = None
        self._lite_path: str | None = None
        self._capabilities: Capabilities | None = None
        self._meta: MetaTable | None = None
        self._connection: MilvusClient | None = None
        #: How to open a Lite database that does not exist yet, until something needs it.
        self._deferred: JSONObject | None = None

        given = bool(uri)
        uri = uri or lite.default_lite_path()
        uri = str(uri)
        if lite.is_server_uri(uri):
            self.uri = uri
            connect: JSONObject = {"uri": uri, "db_name": db}
            if user:
                connect.update(user=user, password=password)
            else:
                connect["token"] = token
        else:
            path = os.path.abspath(os.path.expanduser(uri))
            if not path.endswith(".db"):
                raise ConfigurationError(
                    f"Milvus uri '{uri}' is neither a server address (http://host:19530) nor a Milvus "
                    "Lite database path ending in .db (vector_db.config.uri)."
                )
            if os.path.isfile(path):
                raise VectorStoreError(
                    f"{path} is a file, probably a database of milvus-lite 2.x; milvus-lite 3.x keeps a "
                    "database in a directory. Use another path (vector_db.config.uri) and load the data again."
                )
            _check_parent(path, given)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.uri = path
            connect = {"uri": path}
            if db and db != "default":
                connect["db_name"] = db
            kwargs["grpc_options"] = {**LITE_GRPC_OPTIONS, **(kwargs.get("grpc_options") or {})}
        connect.setdefault("timeout", kwargs.pop("timeout", 30))
        connect.update(kwargs)
        if self.is_lite and not os.path.exists(self.uri):
            # Nothing stored yet: opening Milvus Lite (pymilvus, the engine and its server, about a
            # second) waits for the first real use, so listing an empty store answers at once.
            self._deferred = connect
        else:
            self._connection = self._connect(connect)

    @property
    def _pymilvus(self) -> ModuleType:
        """pymilvus, imported on first use so provider discovery and empty stores stay fast."""
        import pymilvus

        return pymilvus

    @property
    def client(self) -> MilvusClient:
        """The pymilvus `MilvusClient` (DeepSearcher's attribute); a deferred Lite database opens here."""
        return self._client()

    # ------------------------------------------------------------------ connection

    @property
    def is_lite(self) -> bool:
        return not lite.is_server_uri(self.uri)

    def _connect(self, connect: JSONObject) -> MilvusClient:
        MilvusClient = self._pymilvus.MilvusClient
        from deepsearcher.utils.logfile import adopt_library_loggers

        # After the import: pymilvus puts a terminal handler on its logger when it is imported.
        adopt_library_loggers("pymilvus", "milvus_lite")  # their RPC tracebacks: to the log file
        if not self.is_lite:
            try:
                return _with_ping_retries(lambda: MilvusClient(**connect))
            except Exception as exc:  # MilvusException, grpc errors, ...
                raise VectorStoreError(
                    f"Cannot connect to the Milvus server at {self.uri}: {_exc_message(exc)}. Check that the "
                    "server is running and reachable from here, the host and port in vector_db.config.uri, "
                    "and the token / user / password and db settings."
                ) from exc
        # imported here: it needs numpy, which `deepsearcher providers` and --help must not load
        from deepsearcher.vector_db import _milvus_lite_speed as lite_speed

        lite_speed.install()  # milvus-lite's per-row search loops, vectorised and cached (its docstring)
        with lite.StartupCapture() as capture:
            try:
                client = MilvusClient(**connect)
            except Exception as exc:
                if lite.is_lock_error(capture.exc) or lite.lock_is_held_elsewhere(self.uri):
                    raise StoreInUseError(lite.in_use_message(self.uri, lite.lock_holder_pid(self.uri))) from exc
                cause = f": {_exc_message(capture.exc)}" if capture.exc else ""
                raise VectorStoreError(
                    f"Cannot open the Milvus Lite database {self.uri}{cause} ({_exc_message(exc)})."
                ) from (capture.exc or exc)
        lite.acquire(self.uri)
        self._lite_path = self.uri
        _quiet_jieba()
        return client

    @property
    def capabilities(self) -> Capabilities:
        """What this Milvus supports, asked on first use and kept for the connection. A server
        without BM25 / hybrid search gets one warning naming its version and what is lost."""
        if self._capabilities is None:
            with self._op("detect server features"):
                self._capabilities = detect(self._client(), self._pymilvus)
            lost = self._capabilities.lost_features()
            if lost and self.hybrid:
                logger.warning(
                    "Milvus at %s (%s) has no %s.",
                    self.uri,
                    self._capabilities.label,
                    lost,
                )
        return self._capabilities

    def _meta_table(self) -> MetaTable:
        if self._meta is None:
            self._meta = MetaTable(self._client(), self._pymilvus, self._op)
        return self._meta

    def _marker(self) -> VersionMarker:
        if self._markers is None:
            self._markers = VersionMarker(self._client(), self._pymilvus, self._op)
        return self._markers

    def close(self) -> None:
        client, self._connection, self._deferred = getattr(self, "_connection", None), None, None
        self._markers = None
        self._hidden.clear()
        common.close_client(client, logger, "Milvus")
        if self._lite_path:
            lite.release(self._lite_path)
            self._lite_path = None
        self._loaded.clear()
        self._fields.clear()
        self._metrics.clear()
        self._meta = None

    def _client(self) -> MilvusClient:
        if self._connection is None:
            if self._deferred is None:
                raise VectorStoreError(f"The Milvus store at {self.uri} is closed.")
            self._connection, self._deferred = self._connect(self._deferred), None
        return self._connection

    def _not_created(self) -> bool:
        """A Lite database not opened yet whose directory still does not exist: it holds nothing."""
        return self._deferred is not None and not os.path.exists(self.uri)

    @contextmanager
    def _op(self, operation: str, collection: str | None = None) -> Iterator[None]:
        """Turn pymilvus / gRPC failures into a VectorStoreError naming what was attempted; on Milvus
        Lite, a write is counted as it begins and as it ends (what the graph's kept rows check)."""
        writes = self._lite_path is not None and operation in WRITE_OPERATIONS
        if writes:
            lite.note_write(self.uri)
        try:
            yield
        except VectorStoreError:
            raise
        except Exception as exc:
            if not _is_milvus_failure(exc):
                raise
            if collection is not None and _collection_gone(exc, collection):
                # dropped by another request (or process) since it was looked up: a 404, not a store fault
                raise self._gone(operation, collection) from exc
            raise common.operation_failed("Milvus", operation, collection, self.uri, _exc_message(exc)) from exc
        finally:
            if writes:
                lite.note_write(self.uri)

    def _gone(self, operation: str, name: str) -> VectorStoreError:
        """The missing-collection error for `name`, found missing in the middle of `operation`."""
        self._loaded.discard(name)
        self._fields.pop(name, None)
        self._metrics.pop(name, None)
        try:
            existing = sorted(self._client().list_collections())
        except Exception:  # noqa: BLE001 - the listing only decorates the message
            existing = []
        return common.missing_collection(operation, name, self.uri, existing)

    # ------------------------------------------------------------------ collections

    def _exists(self, name: str) -> bool:
        with self._op("has_collection", name):
            return bool(self._client().has_collection(name))

    def _require(self, name: str, operation: str) -> None:
        """Load `name` on first use, or raise naming the existing collections."""
        if name in self._loaded:
            return
        if not self._exists(name):
            with self._op("list_collections"):
                existing = sorted(self._client().list_collections())
            raise common.missing_collection(operation, name, self.uri, existing)
        with self._op("load_collection", name):
            self._load_collection(name)
        self.capabilities  # noqa: B018 - detected (and warned about) once per connection, on first use
        self._loaded.add(name)

    def _load_collection(self, name: str) -> None:
        """Load `name`; on Milvus Lite, a load that fails is retried once with the collection's
        index sidecars removed, since a half-written one (left by a killed process) is the one
        damage a load can repair: they are rebuilt from the stored rows. Which numpy or faiss
        message a torn file gives is not matched; if the retry fails too, the first error stands."""
        try:
            self._client().load_collection(name)
        except Exception as exc:
            if self._lite_path is None or not _is_milvus_failure(exc):
                raise
            removed = lite.remove_index_sidecars(self._lite_path, name)
            if not removed:
                raise
            logger.warning(
                "Collection '%s' did not load (%s); removing its %d index file(s), which a process killed while "
                "writing them leaves half-written, and rebuilding them from the stored vectors",
                name,
                _exc_message(exc),
                len(removed),
            )
            try:
                self._client().load_collection(name)
            except Exception:
                raise exc from None

    def _describe(self, name: str) -> dict[str, Any]:
        with self._op("describe_collection", name):
            return self._client().describe_collection(name)

    def _schema(self, name: str) -> _Schema:
        if name not in self._fields:
            self._fields[name] = _Schema.of(self._describe(name))
        return self._fields[name]

    def _field_names(self, name: str) -> set[str]:
        return self._schema(name).names

    @staticmethod
    def _info_from_description(name: str, desc: dict[str, Any]) -> CollectionInfo:
        props = desc.get("properties") or {}
        dim: int | None = None
        for field in desc.get("fields", []):
            field_dim = _int_or_none((field.get("params") or {}).get("dim"))
            if field_dim is not None and (field.get("name") == EMBEDDING or dim is None):
                dim = field_dim
        if dim is None and props.get(PROP_DIM):
            dim = int(props[PROP_DIM])
        description = props.get(PROP_DESCRIPTION)
        if description is None:
            description = desc.get("description") or ""
        return CollectionInfo(
            collection_name=name,
            description=description,
            dim=dim,
            embedding_model=props.get(PROP_MODEL) or None,
            extra={"fields": [field.get("name") for field in desc.get("fields", [])]},
        )

    def _read_info(self, name: str, side_rows: dict[str, JSONObject] | None = None) -> CollectionInfo:
        """Info from the collection's properties, or from the side collection where the
        server dropped them (`side_rows`: rows already read for a listing)."""
        desc = self._describe(name)
        if PROP_DIM not in (desc.get("properties") or {}):
            rows = side_rows if side_rows is not None else self._meta_table().read([name])
            row = rows.get(name)
            if row:
                stored = {
                    PROP_DESCRIPTION: row["description"],
                    PROP_MODEL: row["embedding_model"],
                }
                desc = dict(desc, properties={**(desc.get("properties") or {}), **stored})
        return self._info_from_description(name, desc)

    def _analyzer_params(self) -> JSONObject:
        if self.is_lite and self.analyzer == "default":
            return LITE_DEFAULT_ANALYZER
        params = analyzer_params(self.analyzer)
        if self.is_lite:
            tokenizer = params.get("tokenizer") or params.get("type", "standard")
            name = tokenizer.get("type", "standard") if isinstance(tokenizer, dict) else tokenizer
            if name not in LITE_ANALYZERS:
                raise ConfigurationError(
                    f"Milvus Lite has no '{name}' analyzer (vector_db.config.analyzer). Allowed values there: "
                    f"{', '.join(LITE_ANALYZERS)}, optionally with a stop filter listing its stop_words; "
                    "a Milvus server (http://host:19530) also offers 'english', 'chinese' and others."
                )
        return params

    def _build_schema(self, dim: int, description: str) -> tuple[CollectionSchema, IndexParams]:
        """The collection schema and indexes; without BM25 on the server, dense only."""
        pm = self._pymilvus
        bm25 = self.capabilities.bm25
        schema = pm.MilvusClient.create_schema(auto_id=True, enable_dynamic_field=False, description=description)
        schema.add_field(PK, pm.DataType.INT64, is_primary=True)
        schema.add_field(EMBEDDING, pm.DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field(TEXT, pm.DataType.VARCHAR, max_length=VARCHAR_MAX)
        if bm25:
            schema.add_field(
                INDEX_TEXT,
                pm.DataType.VARCHAR,
                max_length=VARCHAR_MAX,
                enable_analyzer=True,
                analyzer_params=self._analyzer_params(),
            )
            schema.add_field(SPARSE, pm.DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field(REFERENCE, pm.DataType.VARCHAR, max_length=VARCHAR_MAX)
        schema.add_field(SOURCE_HASH, pm.DataType.VARCHAR, max_length=HASH_MAX)
        schema.add_field(SOURCE_CHUNKS, pm.DataType.INT64)
        schema.add_field(METADATA, pm.DataType.JSON)
        if self.graph:  # what entity links look up (graph: false leaves the schema as it was)
            schema.add_field(TITLE_KEY, pm.DataType.VARCHAR, max_length=TITLE_KEY_MAX)
        index = self._client().prepare_index_params()
        dense_index = lite.dense_index_at_creation(self.index_type, self.is_lite)
        if dense_index is not None:
            index.add_index(
                EMBEDDING,
                index_type=dense_index,
                metric_type="COSINE",
                params=self.index_params,
            )
        if bm25:
            schema.add_function(
                pm.Function(
                    name=BM25_FUNCTION,
                    function_type=pm.FunctionType.BM25,
                    input_field_names=[INDEX_TEXT],
                    output_field_names=[SPARSE],
                )
            )
            index.add_index(SPARSE, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        return schema, index

    def _create_collection(
        self,
        name: str,
        dim: int,
        description: str,
        embedding_model: str | None,
        **kwargs: object,
    ) -> None:
        schema, index = self._build_schema(dim, description)
        properties = {
            PROP_DESCRIPTION: description,
            PROP_DIM: str(dim),
            PROP_ANALYZER: json.dumps(self._analyzer_params()),
        }
        if embedding_model:
            properties[PROP_MODEL] = embedding_model
        with self._op("create_collection", name):
            self._client().create_collection(
                name,
                schema=schema,
                properties=properties,
                # Strong for the requests that name no level: pymilvus's query_iterator (module docstring).
                consistency_level=kwargs.get("consistency_level", STRONG),
            )
        # Indexes on an empty collection are ready at once; sync=False skips pymilvus's
        # wait, which calls AllocTimestamp, an RPC Milvus Lite does not implement (it
        # logs a traceback for it).
        if len(index):
            with self._op("create_index", name):
                self._client().create_index(name, index, sync=False)
        if PROP_DIM not in (self._describe(name).get("properties") or {}):  # dropped by this server
            self._meta_table().write(name, description, embedding_model, dim)
        self._fields.pop(name, None)
        self._metrics.pop(name, None)
        self._require(name, "open the collection")

    def _open_existing(self, name: str, dim: int, description: str, embedding_model: str | None) -> None:
        info = self._read_info(name)
        common.check_embedding(info, dim, embedding_model)
        if info.embedding_model is None and embedding_model:
            logger.warning(
                "Collection '%s' records no embedding model (built by DeepSearcher or another tool): "
                "unknown model, assuming its %s-dim vectors come from '%s'.",
                name,
                info.dim,
                embedding_model,
            )
        changes = common.info_updates(info, description, embedding_model)
        if changes and PROP_DIM not in (self._describe(name).get("properties") or {}):
            merged = {
                "description": info.description,
                "embedding_model": info.embedding_model,
                **changes,
            }
            self._meta_table().write(name, merged["description"], merged["embedding_model"], info.dim or dim)
        elif changes:
            updates = {INFO_PROPERTIES[key]: value for key, value in changes.items()}
            with self._op("alter_collection_properties", name):
                self._client().alter_collection_properties(name, properties=updates)
        self._require(name, "open the collection")

    def list_collections(self, dim: int | None = None) -> list[CollectionInfo]:
        if self._not_created():
            return []
        with self._op("list_collections"):
            names = sorted(n for n in self._client().list_collections() if not _is_internal(n))
        side_rows = self._meta_table().read(names)
        infos = []
        for name in names:
            try:
                infos.append(self._read_info(name, side_rows))
            except CollectionNotFoundError:
                continue  # dropped since the names were listed: not in the listing
        return common.of_dim(infos, dim)

    def clear_db(self, collection: str | None = None) -> None:
        name = self._collection(collection)
        with self._op("drop_collection", name):
            if self._client().has_collection(name):
                self._client().drop_collection(name)
        self._meta_table().forget(name)
        self._marker().forget(name)
        self._hidden.pop(name, None)
        self._loaded.discard(name)
        self._fields.pop(name, None)
        self._metrics.pop(name, None)

    # ------------------------------------------------------------------ data

    def _row(self, chunk: Chunk, schema: _Schema, dim: int | None) -> JSONObject:
        fields = schema.names
        metadata = chunk.metadata or {}
        row: JSONObject = {
            EMBEDDING: common.checked_vector(chunk, dim),
            TEXT: fit_bytes(chunk.text),
            REFERENCE: fit_bytes(chunk.reference),
            METADATA: _json_safe(metadata),
        }
        if INDEX_TEXT in fields:
            index_text = chunk.index_text
            row[INDEX_TEXT] = fit_bytes(segment_chinese(index_text) if schema.segmented else index_text)
        source_hash, source_chunks = common.source_fields(metadata)
        if SOURCE_HASH in fields:
            row[SOURCE_HASH] = fit_bytes(source_hash, HASH_MAX)
        if SOURCE_CHUNKS in fields:
            row[SOURCE_CHUNKS] = source_chunks
        if TITLE_KEY in fields:
            row[TITLE_KEY] = fit_bytes(title_key(chunk.title or ""), TITLE_KEY_MAX)
        return row

    def _insert(self, name: str, chunks: list[Chunk], batch_size: int, **kwargs: object) -> int:
        schema = self._schema(name)
        dim = self._read_info(name).dim
        inserted = 0
        for batch in common.batches(chunks, batch_size):
            rows = [self._row(chunk, schema, dim) for chunk in batch]
            with self._op("insert", name):
                result = self._client().insert(name, rows)
            inserted += int(result.get("insert_count", len(rows))) if isinstance(result, dict) else len(rows)
        self._seal(name)
        return inserted

    def flush(self, collection: str | None = None) -> None:
        """Seal inserted rows (Milvus Lite searches unflushed rows ~50x slower)."""
        name = self._collection(collection)
        with self._op("flush", name):
            try:
                self._client().flush(name)
            except Exception as exc:
                if not (self.is_lite and _mentions(exc, STALE_SEQ)):
                    raise
                # milvus-lite deletes a flushed WAL's data file, then its delete file: a process killed
                # in between leaves the deletes alone, which the next run replays into its memtable with
                # sequence numbers below the manifest's; flushing them before any new write then fails
                # ("current_seq is monotonic"). A tombstone for an id that never exists (ours are
                # positive) is a write with a fresh sequence number, after which the flush goes through.
                logger.info("Milvus Lite replayed a half-deleted write-ahead log of '%s'; flushing past it", name)
                self._client().delete(name, ids=[NEVER_AN_ID])
                self._client().flush(name)

    def _seal(self, name: str) -> None:
        """Flush after our writes on in-process Milvus Lite only: a server seals segments
        itself, and flushing after every batch there makes many small segments."""
        if self.is_lite:
            self.flush(name)

    def has_documents(self, collection: str | None) -> bool:
        return self.count(collection) > 0

    def count(self, collection: str | None = None, filter: str = "") -> int:
        """Number of chunks in a collection (matching `filter` when given)."""
        name = self._collection(collection)
        self._require(name, "count")
        with self._op("count", name):
            rows = self._client().query(
                name,
                filter=filter,
                output_fields=["count(*)"],
                consistency_level=STRONG,
            )
        return int(rows[0]["count(*)"]) if rows else 0

    def delete_by_reference(self, collection: str | None, reference: str) -> int:
        name = self._collection(collection)
        self._require(name, "delete")
        expr = f"{REFERENCE} == {quote(reference)}"
        matching = self.count(name, expr)
        if matching == 0:
            return 0
        with self._op("delete", name):
            self._client().delete(name, filter=expr)
        self._seal(name)
        return matching

    def stored_chunks(self, collection: str | None, reference: str) -> list[StoredChunk] | None:
        """Every row of `reference` with its id and the pipeline's chunk_key / chunk_index."""
        name = self._collection(collection)
        self._require(name, "list chunks")
        rows: list[StoredChunk] = []
        with self._op("query_iterator", name):
            iterator = self._client().query_iterator(
                name,
                batch_size=1000,
                filter=f"{REFERENCE} == {quote(reference)}",
                output_fields=[PK, METADATA],
                consistency_level=STRONG,  # ignored by pymilvus 3.0's iterator: the collection's level counts
            )
            try:
                while batch := iterator.next():
                    for row in batch:
                        metadata = row.get(METADATA) or {}
                        index = metadata.get("chunk_index")
                        rows.append(
                            StoredChunk(
                                row[PK],
                                str(metadata.get("chunk_key") or ""),
                                index if isinstance(index, int) else None,
                                metadata.get("source_hash"),
                            )
                        )
            finally:
                iterator.close()
        return rows

    def copy_source(self, collection: str | None, source: str, target: str) -> int | None:
        """Every row of `source` inserted again under `target` (the BM25 field is computed by
        Milvus from the copied index text); returns the rows copied."""
        name = self._collection(collection)
        self._require(name, "copy a source")
        fields = sorted(self._field_names(name) - {PK, SPARSE})
        copied = 0
        for batch in self._stored_batches(name, f"{REFERENCE} == {quote(source)}", fields):
            rows = [_renamed_row(row, fields, source, target) for row in batch]
            with self._op("insert", name):
                self._client().insert(name, rows)
            copied += len(rows)
        self._seal(name)
        return copied

    def _stored_batches(self, name: str, filter: str, fields: list[str]) -> Iterator[list[dict[str, Any]]]:
        """The rows of `name` matching `filter` (all: ""), `fields` of each, in batches of 256."""
        with self._op("query_iterator", name):
            iterator = self._client().query_iterator(
                name, batch_size=256, filter=filter, output_fields=fields, consistency_level=STRONG
            )
            try:
                while batch := iterator.next():
                    yield batch
            finally:
                iterator.close()

    def source_metadata(self, collection: str | None, reference: str) -> JSONObject | None:
        name = self._collection(collection)
        self._require(name, "read a source")
        with self._op("query", name):
            rows = self._client().query(
                name,
                filter=f"{REFERENCE} == {quote(reference)}",
                output_fields=[METADATA],
                limit=1,
                consistency_level=STRONG,
            )
        return dict(rows[0].get(METADATA) or {}) if rows else None

    def delete_ids(self, collection: str | None, ids: Sequence[int | str]) -> int:
        name = self._collection(collection)
        if not ids:
            return 0
        with self._op("delete", name):
            self._client().delete(name, ids=list(ids))
        self.flush(name)
        return len(ids)

    def list_sources(self, collection: str | None) -> dict[str, SourceRecord]:
        name = self._collection(collection)
        self._require(name, "list sources")
        fields = self._field_names(name)
        has_own_fields = SOURCE_HASH in fields and SOURCE_CHUNKS in fields
        output = [REFERENCE, SOURCE_HASH, SOURCE_CHUNKS] if has_own_fields else [REFERENCE, METADATA]
        tally = common.SourceTally()
        with self._op("query_iterator", name):
            iterator = self._client().query_iterator(
                name,
                batch_size=LIST_BATCH if has_own_fields else 1000,  # whole metadata rows: smaller pages
                filter="",
                output_fields=output,
                consistency_level=STRONG,
            )
            try:
                while True:
                    batch = iterator.next()
                    if not batch:
                        break
                    for row in batch:
                        source = row if has_own_fields else (row.get(METADATA) or {})  # older collections: in metadata
                        tally.add(
                            row.get(REFERENCE, ""),
                            source.get(SOURCE_HASH),
                            source.get(SOURCE_CHUNKS),
                        )
            finally:
                iterator.close()
        return tally.records()

    # ------------------------------------------------------------------ search

    def dense_index(self, collection: str | None = None) -> str:
        """The index type of the collection's dense field ("none": each segment searched exactly)."""
        name = self._collection(collection)
        self._require(name, "describe the index")
        with self._op("describe_index", name):
            indexes = self._client().list_indexes(name, field_name=EMBEDDING)
            described = self._client().describe_index(name, indexes[0]) if indexes else {}
        return str(described.get("index_type") or "none").upper()

    def fit_index(self, collection: str | None = None) -> str | None:
        """On Milvus Lite under index_type AUTO, declare the HNSW index once the collection holds
        `index_switch_rows` rows; returns "HNSW" when declared now, else None.

        Declared on a loaded collection, Milvus Lite builds each segment's graph in turn while
        searches go on (a segment without its graph yet is searched exactly), writes the graphs
        beside the segments (a reopen loads them, not rebuilds them) and builds one for each
        segment written later. The caller holds the collection's write lock.

        A collection made with FLAT (before AUTO, or under index_type FLAT) is switched too, its
        metric kept: released, its FLAT index dropped, loaded again (seconds: searches in that
        window fail with a store error), then HNSW declared as above; until the
        graphs are built its segments are searched exactly, as FLAT searched them."""
        if not lite.switches_by_size(self.index_type, self.is_lite):
            return None
        name = self._collection(collection)
        current = self.dense_index(name)
        if current not in ("NONE", "FLAT") or self.count(name) < self.index_switch_rows:
            return None
        metric = self._metric(name)
        index = self._client().prepare_index_params()
        index.add_index(EMBEDDING, index_type="HNSW", metric_type=metric, params=dict(lite.HNSW_BUILD_PARAMS))
        try:
            if current == "FLAT":  # Lite drops an index only when released; loaded again without one
                with self._op("switch FLAT to HNSW", name):
                    client = self._client()
                    client.release_collection(name)
                    client.drop_index(name, client.list_indexes(name, field_name=EMBEDDING)[0])
                    client.load_collection(name)
            self._client().create_index(name, index, sync=False)
        except Exception as exc:  # e.g. a milvus-lite without faiss: the data is stored, search stays exact
            if not _is_milvus_failure(exc):
                raise
            logger.warning("Collection '%s' keeps exact search: HNSW could not be declared (%s)", name, exc)
            return None
        self._metrics.pop(name, None)
        return "HNSW"

    def rebuild_graph(self, collection: str | None = None) -> int:
        """Give a collection loaded without the graph (`graph: false`, or before it existed) its
        `title_key` field, without re-embedding: the rows (vectors included) are copied into a new
        collection with the same settings and the field, which then replaces the old one. Returns
        the rows copied; 0 when the collection already has the field (nothing to do).

        Milvus cannot add a field to a collection, hence the copy. The caller holds the write lock."""
        name = self._collection(collection)
        self._require(name, "rebuild the entity graph")
        if TITLE_KEY in self._field_names(name):
            return 0
        info = self._read_info(name)
        if info.dim is None:
            raise VectorStoreError(f"Cannot rebuild the graph of '{name}': its vector dimension is not recorded.")
        properties = self._describe(name).get("properties") or {}
        scratch = f"{name}{GRAPH_REBUILD_SUFFIX}"
        graph, analyzer = self.graph, self.analyzer
        try:
            self.graph = True
            if properties.get(PROP_ANALYZER):  # BM25 tokenises as it did when the collection was made
                self.analyzer = json.loads(properties[PROP_ANALYZER])
            self.clear_db(scratch)  # left by a rebuild that was interrupted
            self._create_collection(scratch, info.dim, info.description, info.embedding_model)
        finally:
            self.graph, self.analyzer = graph, analyzer
        copied = self._copy_rows(name, scratch)
        hidden = self._hidden.get(name)
        self.clear_db(name)
        with self._op("rename_collection", scratch):
            self._client().rename_collection(scratch, name)
        if PROP_DIM not in (self._describe(name).get("properties") or {}):
            self._meta_table().forget(scratch)
            self._meta_table().write(name, info.description, info.embedding_model, info.dim)
        self._fields.pop(scratch, None)
        self._metrics.pop(scratch, None)
        self._hidden.pop(scratch, None)
        self._loaded.discard(scratch)
        if hidden:  # versions a load in progress hides stay hidden
            self._hidden[name] = hidden
        self._require(name, "open the rebuilt collection")
        self.fit_index(name)
        return copied

    def _copy_rows(self, source: str, target: str) -> int:
        """Every row of `source` inserted into `target` (BM25 recomputed by Milvus), with `target`'s title_key."""
        fields = sorted(self._field_names(source) - {PK, SPARSE})
        wanted = self._field_names(target)
        copied = 0
        for batch in self._stored_batches(source, "", fields):
            rows = []
            for row in batch:
                copy = {key: row[key] for key in fields if key in row and key in wanted}
                copy[EMBEDDING] = [float(value) for value in copy[EMBEDDING]]
                title = str((copy.get(METADATA) or {}).get("title") or "")
                copy[TITLE_KEY] = fit_bytes(title_key(title), TITLE_KEY_MAX)
                rows.append(copy)
            with self._op("insert", target):
                self._client().insert(target, rows)
            copied += len(rows)
        self._seal(target)
        return copied

    def _no_bm25_reason(self, name: str) -> str:
        reason = f"collection '{name}' has no BM25 field"
        if not self.capabilities.bm25:
            reason += f"; the Milvus at {self.uri} ({self.capabilities.label}) has no BM25 functions (Milvus >= 2.5)"
        return reason

    def _candidates(self, top_k: int) -> int:
        return self.candidates_per_side or max(top_k * 2, 20)

    def _metric(self, name: str) -> str:
        """The metric of the collection's vector index: COSINE for ours, L2 for DeepSearcher's."""
        if name not in self._metrics:
            with self._op("describe_index", name):
                indexes = self._client().list_indexes(name, field_name=EMBEDDING)
                described = self._client().describe_index(name, indexes[0]) if indexes else {}
            self._metrics[name] = str(described.get("metric_type") or "COSINE").upper()
        return self._metrics[name]

    def _dense_params(self, limit: int, metric: str = "COSINE") -> JSONObject:
        params: JSONObject = {"metric_type": metric}
        hnsw = lite.hnsw_search_params(self.index_type, self.is_lite, limit)
        if hnsw is not None:
            params["params"] = hnsw
        return params

    def _ranker(self) -> BaseRanker:
        if self.ranker == "weighted":
            return self._pymilvus.WeightedRanker(*self.weights)
        return self._pymilvus.RRFRanker(self.rrf_k)

    def _titled(self, name: str, titles: list[str], vector: list[float], expr: str | None) -> list[RetrievalResult]:
        """Chunks whose `title` is one of `titles`, the closest to `vector` first: the graph's
        edges, read from the rows themselves (no side table to keep exact): the normalised
        title's own field, or in collections made before it a (slower) filter on the metadata."""
        keys = sorted({normalise(title) for title in titles} - {""})
        if not keys:
            return []
        if TITLE_KEY in self._schema(name).names:
            condition = _title_condition(keys)
        else:  # `in [...]` takes only a field on Milvus Lite, not a JSON path: one equality per title
            condition = " or ".join(f'{METADATA}["title"] == {quote(title)}' for title in titles)
        expr = self._visible(name, self._schema(name), expr or "")  # not the old version a replacement hides
        rows = self._kept_title_rows(name, keys, expr)
        if rows is None:
            rows = self._linked_rows(name, condition, expr) or []
        scored = [(sum(a * b for a, b in zip(vector, row.get(EMBEDDING) or (), strict=False)), row) for row in rows]
        scored.sort(key=lambda pair: -pair[0])
        return [common.stored_result(row, score) for score, row in scored]

    def _read_titles_ahead(self, name: str, titles: list[str], expr: str | None) -> None:
        """On embedded Lite, the rows of `titles` read in one look-up and kept (graph/title_rows.py),
        so that the walk's first two look-ups (the question's names, the first hop's) find them
        kept instead of querying twice; the walk itself is unchanged."""
        keys = sorted({normalise(title) for title in titles} - {""})
        if keys:
            self._kept_title_rows(name, keys, self._visible(name, self._schema(name), expr or ""))

    def _kept_title_rows(self, name: str, keys: list[str], expr: str) -> Sequence[dict[str, Any]] | None:
        """The rows titled by `keys` among the visible ones (`expr`) through the kept rows: only on
        embedded Lite (one process writes there, so every write is counted); None elsewhere, or
        when the row limit may cut the answer (the caller then queries as it always did)."""
        if not self._lite_path or TITLE_KEY not in self._schema(name).names:
            return None
        return self._title_rows.rows(
            (name, expr),
            keys,
            lambda: lite.writes(self.uri),
            lambda missing: self._linked_rows(name, _title_condition(missing), expr, full=False),
            lambda row: str(row.get(TITLE_KEY, "")),
            LINKED_ROWS,
        )

    def _linked_rows(self, name: str, condition: str, expr: str, full: bool = True) -> list[dict[str, Any]] | None:
        """The rows matching `condition` among the visible ones (`expr`), at most LINKED_ROWS; with
        `full=False`, None when that limit may have cut the answer."""
        if expr:
            condition = f"({expr}) and ({condition})"
        with self._op("linked chunks query", name):
            rows = self._client().query(
                name,
                filter=condition,
                output_fields=[TEXT, REFERENCE, METADATA, EMBEDDING, TITLE_KEY]
                if TITLE_KEY in self._schema(name).names
                else [TEXT, REFERENCE, METADATA, EMBEDDING],
                limit=LINKED_ROWS,
                **self._search_level,
            )
        return None if not full and len(rows) >= LINKED_ROWS else list(rows)

    def _search(
        self,
        name: str,
        vector: list[float],
        top_k: int,
        text: str,
        filter: str | None,
        mode: str | None,
        **kwargs: Any,
    ) -> list[RetrievalResult]:
        """Dense, BM25 or hybrid (fused by the weighted or the RRF ranker) search; `filter`
        is a Milvus boolean expression on the fields (e.g. 'reference == "a.txt"'). Then, by
        default or with `links=True`, one step over the entity graph: the chunks the top hits
        name join the list (deepsearcher/graph/links.py)."""
        if not self.is_lite and not getattr(self._pin, "on", False):
            return self._pinned_search(name, vector, top_k, text, filter, mode, **kwargs)
        if _as_bool(kwargs.pop("links", self.graph and mode is None)) and text and mode != "sparse":
            ranked = self._search(name, vector, max(top_k, LINK_CANDIDATES), text, filter, mode, links=False, **kwargs)
            lookup = lambda titles: self._titled(name, titles, vector, filter)  # noqa: E731
            walk_k = max(top_k, LINK_CANDIDATES) if self.graph_feedback else top_k
            if self.graph_walk == "ppr":
                self._read_titles_ahead(name, first_reads(text, ranked, self.spread_settings), filter)
                walked = spread(text, ranked, lookup, walk_k, self.spread_settings)
            else:
                walked = follow_links(text, ranked, lookup, walk_k, self.link_settings)
            if not self.graph_feedback or SPARSE not in self._schema(name).names:
                return walked[:top_k]
            keyword = lambda query: self._search(name, vector, walk_k, query, filter, "sparse", links=False)  # noqa: E731
            return with_feedback(text, walked, keyword, top_k, self.feedback_settings)
        schema = self._schema(name)
        if mode is None:
            mode = "hybrid" if self.hybrid and text else "dense"
        if mode in ("sparse", "hybrid") and (not text or SPARSE not in schema.names):
            if mode == "sparse":
                reason = "no query_text was given" if not text else self._no_bm25_reason(name)
                raise VectorStoreError(f"Cannot run a BM25 (sparse) search: {reason}.")
            mode = "dense"
        if mode != "dense" and schema.segmented:
            text = segment_chinese(text)  # as the stored index_text was cut
        with_embedding = _as_bool(kwargs.get("with_embedding", self.return_embedding))
        output = [TEXT, REFERENCE, METADATA] + ([EMBEDDING] if with_embedding else [])
        metric = self._metric(name)
        expr = self._visible(name, schema, filter or "")
        client = self._client()
        with self._op(f"{mode} search", name):
            if mode == "dense":
                hits = client.search(
                    name,
                    data=[list(vector)],
                    anns_field=EMBEDDING,
                    limit=top_k,
                    filter=expr,
                    output_fields=output,
                    search_params=self._dense_params(top_k, metric),
                    **self._search_level,
                )[0]
            elif mode == "sparse":
                hits = client.search(
                    name,
                    data=[text],
                    anns_field=SPARSE,
                    limit=top_k,
                    filter=expr,
                    output_fields=output,
                    search_params={"metric_type": "BM25"},
                    **self._search_level,
                )[0]
            elif self.ranker == "weighted" and not self.capabilities.weighted_bm25:
                hits = self._fused_hybrid(name, vector, text, top_k, expr, output)
            else:
                pm = self._pymilvus
                limit = max(self._candidates(top_k), top_k)
                requests = [
                    pm.AnnSearchRequest(
                        data=[list(vector)],
                        anns_field=EMBEDDING,
                        param=self._dense_params(limit, metric),
                        limit=limit,
                        expr=expr or None,
                    ),
                    pm.AnnSearchRequest(
                        data=[text],
                        anns_field=SPARSE,
                        param={"metric_type": "BM25"},
                        limit=limit,
                        expr=expr or None,
                    ),
                ]
                hits = client.hybrid_search(
                    name,
                    requests,
                    self._ranker(),
                    limit=top_k,
                    output_fields=output,
                    **self._search_level,
                )[0]
        results = []
        for hit in hits:
            score = float(hit.get("distance", 0.0))
            if mode == "sparse":
                score = abs(score)  # Milvus Lite returns BM25 scores negated (order is right)
            elif mode == "dense" and metric == "L2":
                score = 1.0 - score / 2.0  # squared L2 → cosine for unit vectors; higher is better
            result = common.stored_result(hit.get("entity") or {}, score)
            if with_embedding:
                result.embedding = [float(x) for x in (hit.get("entity") or {}).get(EMBEDDING) or []]
            results.append(result)
        return results

    def hide_versions(self, collection: str | None, hide: Iterable[str], show: Iterable[str] = ()) -> None:
        """Move the collection's stored version marker (`_milvus_versions`), which every reader in
        every process filters on. On a server, the row changes made so far are made visible first
        (a Strong read), so no reader's rows lag behind the marker it reads."""
        name = self._collection(collection)
        shown = set(show)
        if shown and not self.is_lite and self._exists(name):
            self.count(name)  # Strong: the inserts or deletes that end this step are visible everywhere
        hidden = self._marker().change(name, set(hide), shown)
        with self._hidden_lock:  # one step: a search sees the set before or after, never between
            self._hidden[name] = hidden

    def _hidden_versions(self, name: str) -> frozenset[str]:
        """The versions hidden now: on a server, those the running search was pinned to; on embedded
        Milvus Lite (one process at a time), the stored marker read once and kept in memory."""
        return common.hidden_versions(
            self._pin, self._hidden, name, lambda: self._marker().read(name)[1], self._hidden_lock
        )

    def _pinned_search(self, name: str, *args: Any, **kwargs: Any) -> list[RetrievalResult]:
        """A search on a server, between two reads of the version marker (`_common.search_pinned`)."""
        level = self._search_level or None
        return common.search_pinned(
            self._pin,
            lambda: self._marker().read(name, level),
            lambda: self._search(name, *args, **dict(kwargs)),
            RETRIES,
        )

    def _visible(self, name: str, schema: _Schema, expr: str) -> str:
        """`expr` narrowed to the versions not hidden (collections without a source_hash field show all)."""
        if SOURCE_HASH not in schema.names:
            return expr
        hidden = self._hidden_versions(name)
        if not hidden:
            return expr
        narrowed = f"{SOURCE_HASH} not in [{', '.join(quote(value) for value in sorted(hidden))}]"
        return f"({expr}) and {narrowed}" if expr else narrowed

    def _fused_hybrid(
        self,
        name: str,
        vector: list[float],
        text: str,
        top_k: int,
        expr: str,
        output: list[str],
    ) -> list[dict[str, Any]]:
        """Weighted fusion done here, for servers whose WeightedRanker inverts BM25 (see
        Capabilities.weighted_bm25): the same normalisation Milvus documents, (1 + cos) / 2
        and 2·atan(bm25)/π, over `candidates_per_side` hits of each search."""
        limit = max(self._candidates(top_k), top_k)
        client = self._client()
        dense = client.search(
            name,
            data=[list(vector)],
            anns_field=EMBEDDING,
            limit=limit,
            filter=expr,
            output_fields=output,
            search_params=self._dense_params(limit),
            **self._search_level,
        )[0]
        sparse = client.search(
            name,
            data=[text],
            anns_field=SPARSE,
            limit=limit,
            filter=expr,
            output_fields=output,
            search_params={"metric_type": "BM25"},
            **self._search_level,
        )[0]
        fused: dict[Any, dict[str, Any]] = {}
        for hits, weight, norm in (
            (dense, self.weights[0], lambda d: (1.0 + d) / 2.0),
            (sparse, self.weights[1], lambda d: 2.0 * math.atan(abs(d)) / math.pi),
        ):
            for hit in hits:
                entry = fused.setdefault(hit["id"], {"entity": hit.get("entity") or {}, "distance": 0.0})
                entry["distance"] += weight * norm(float(hit.get("distance", 0.0)))
        return sorted(fused.values(), key=lambda hit: -hit["distance"])[:top_k]


def _title_condition(keys: Iterable[str]) -> str:
    """The filter of the rows whose title key is one of `keys`."""
    return f"{TITLE_KEY} in [{', '.join(quote(key) for key in keys)}]"


def _renamed_row(row: dict[str, Any], fields: list[str], source: str, target: str) -> dict[str, Any]:
    """A stored row as a new row of `target`: its fields, the reference (in metadata too) renamed."""
    copy = {key: row[key] for key in fields if key in row}
    if EMBEDDING in copy:
        copy[EMBEDDING] = [float(value) for value in copy[EMBEDDING]]
    copy[REFERENCE] = fit_bytes(target)
    metadata = dict(copy.get(METADATA) or {})
    if metadata.get("reference") == source:
        metadata["reference"] = target
    if METADATA in copy:
        copy[METADATA] = metadata
    return copy


def _int_or_none(value: Any) -> int | None:
    """`value` as an int, or None when it is missing or not a number."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _as_bool(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _is_internal(name: str) -> bool:
    """Collections this store keeps for itself (collection info, feature probes)."""
    return name in (META_COLLECTION, MARKER_COLLECTION) or name.startswith(PROBE_PREFIX)


#: What Milvus (server and Lite) answers for a collection that is not there: its error code, and
#: the words of the versions that send no code.
COLLECTION_NOT_FOUND_CODE = 100


def _collection_gone(exc: BaseException, name: str) -> bool:
    quoted = re.escape(name)
    gone = re.compile(
        rf"collection ['\"]?{quoted}['\"]? (?:does not exist|not found)|can't find collection\b.*\b{quoted}\b",
        re.IGNORECASE,
    )
    return any(
        getattr(seen, "code", None) == COLLECTION_NOT_FOUND_CODE or gone.search(str(seen)) for seen in cause_chain(exc)
    )


def _check_parent(path: str, given: bool) -> None:
    """A configured Lite path may name one new folder (made like `mkdir`), never a tree of them: a typo
    in a path must fail here in one line, not leave folders behind. The default path makes its own."""
    parent = os.path.dirname(path)
    if given and not os.path.isdir(parent) and not os.path.isdir(os.path.dirname(parent)):
        missing = os.path.dirname(parent)
        while not os.path.isdir(os.path.dirname(missing)):
            missing = os.path.dirname(missing)
        raise ConfigurationError(
            f"The folder {missing} does not exist, so the Milvus Lite database {path} cannot be made there "
            "(vector_db.config.uri): create the folder, or correct the path."
        )


def _is_milvus_failure(exc: BaseException) -> bool:
    """pymilvus and gRPC errors (as opposed to programming errors in this module)."""
    module = type(exc).__module__ or ""
    return module.startswith(("pymilvus", "grpc", "milvus_lite")) or isinstance(exc, (ConnectionError, TimeoutError))
