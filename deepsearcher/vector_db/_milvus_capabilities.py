"""What the Milvus at the other end of a connection can do, asked once per connection.

Milvus servers differ: BM25 functions (server-side sparse vectors from text) arrived in
2.5, ``hybrid_search`` in 2.4; a 2.3 server accepts a schema with a BM25 function and then
fails to index it. The milvus-lite 2.5 engine has both but no ``GetVersion`` RPC. So the
store asks (``get_server_version``), and where the server does not say, probes with a
throw-away collection, instead of guessing from the uri.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pymilvus import CollectionSchema, MilvusClient

logger = logging.getLogger(__name__)

BM25_SINCE = (2, 5)
HYBRID_SINCE = (2, 4)
PROBE_PREFIX = "_deepsearcher_probe_"


@dataclass(frozen=True)
class Capabilities:
    """Features of one Milvus endpoint. `version` is what the server reports ("2.3.5",
    "milvus_lite-3.2.2"), or None when it has no GetVersion RPC."""

    version: str | None
    bm25: bool
    hybrid_search: bool
    # The server's WeightedRanker ranks BM25 hits the right way round (the milvus-lite 2.5
    # engine normalises BM25 scores as if lower were better, inverting the fused order).
    weighted_bm25: bool = True

    @property
    def label(self) -> str:
        return f"version {self.version}" if self.version else "of unknown version (no GetVersion RPC)"

    def lost_features(self) -> str:
        """One line saying what a dense-only store loses here (empty when nothing is lost)."""
        if self.bm25 and self.hybrid_search:
            return ""
        missing = [
            name
            for name, has in (
                ("BM25 functions", self.bm25),
                ("hybrid_search", self.hybrid_search),
            )
            if not has
        ]
        return (
            f"{' and '.join(missing)} (Milvus >= 2.5 has them): collections are created dense-only and searches "
            "use the embedding alone, so keyword matches of rare terms (codes, names, numbers) are lost"
        )


class _MuteRpcErrors(logging.Filter):
    """pymilvus logs a traceback at ERROR for every failed RPC; a probe expects failures."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


@contextmanager
def muted_rpc_errors() -> Iterator[None]:
    """Keep pymilvus's per-RPC error tracebacks off the console while probing."""
    target = logging.getLogger("pymilvus.decorators")
    mute = _MuteRpcErrors()
    target.addFilter(mute)
    try:
        yield
    finally:
        target.removeFilter(mute)


def parse_version(text: str) -> tuple[int, ...] | None:
    """(2, 3, 5) from "v2.3.5-lite" or "2.5.0"; None for anything else (e.g. milvus_lite-3.2.2)."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    if not match:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def from_version(version: str) -> Capabilities | None:
    """Capabilities implied by a reported version, or None when the version says nothing."""
    if version.lower().startswith("milvus_lite"):  # in-process Milvus Lite 3.x: the full feature set
        return Capabilities(version, bm25=True, hybrid_search=True)
    numbers = parse_version(version)
    if numbers is None:
        return None
    return Capabilities(
        version.lstrip("v"),
        bm25=numbers >= BM25_SINCE,
        hybrid_search=numbers >= HYBRID_SINCE,
    )


def detect(client: MilvusClient, pymilvus: ModuleType) -> Capabilities:
    """Ask the server; probe with a throw-away collection when it does not report a version."""
    version: str | None = None
    with muted_rpc_errors():
        try:
            version = str(client.get_server_version() or "") or None
        except Exception as exc:  # noqa: BLE001 - UNIMPLEMENTED on milvus-lite engines: probe instead
            logger.debug("get_server_version failed (%s); probing the server's features", exc)
    if version:
        known = from_version(version)
        if known is not None:
            return known
    return _probe(client, pymilvus, version)


def _probe_schema(pymilvus: ModuleType) -> CollectionSchema:
    schema = pymilvus.MilvusClient.create_schema(auto_id=True, enable_dynamic_field=False)
    schema.add_field("id", pymilvus.DataType.INT64, is_primary=True)
    schema.add_field("v", pymilvus.DataType.FLOAT_VECTOR, dim=2)
    schema.add_field("t", pymilvus.DataType.VARCHAR, max_length=64, enable_analyzer=True)
    schema.add_field("s", pymilvus.DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        pymilvus.Function(
            name="t_bm25",
            function_type=pymilvus.FunctionType.BM25,
            input_field_names=["t"],
            output_field_names=["s"],
        )
    )
    return schema


def _probe(client: MilvusClient, pymilvus: ModuleType, version: str | None) -> Capabilities:
    """Create a collection with a BM25 function, index it, run a BM25 and a weighted hybrid
    search, drop it. A refusal at any step is the answer."""
    name = PROBE_PREFIX + uuid.uuid4().hex[:12]
    bm25 = False
    with muted_rpc_errors():
        try:
            client.create_collection(name, schema=_probe_schema(pymilvus))
            index = client.prepare_index_params()
            index.add_index("v", index_type="FLAT", metric_type="COSINE")
            index.add_index("s", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            client.create_index(name, index, sync=False)
            client.load_collection(name)
            # Same vector, one strong and one weak BM25 match for "probe".
            rows = [
                {"v": [1.0, 0.0], "t": "probe"},
                {"v": [1.0, 0.0], "t": "alpha beta gamma delta probe"},
            ]
            ids = list(client.insert(name, rows)["ids"])
            sparse = client.search(
                name,
                data=["probe"],
                anns_field="s",
                limit=2,
                search_params={"metric_type": "BM25"},
                consistency_level="Strong",  # the rows just inserted, whatever the server's default
            )
            bm25 = True
            requests = [
                pymilvus.AnnSearchRequest(
                    data=[[1.0, 0.0]],
                    anns_field="v",
                    param={"metric_type": "COSINE"},
                    limit=2,
                ),
                pymilvus.AnnSearchRequest(
                    data=["probe"],
                    anns_field="s",
                    param={"metric_type": "BM25"},
                    limit=2,
                ),
            ]
            fused = client.hybrid_search(
                name, requests, pymilvus.WeightedRanker(0.0, 1.0), limit=2, consistency_level="Strong"
            )
            sparse_first, fused_first = sparse[0][0]["id"], fused[0][0]["id"]
            return Capabilities(version, True, True, weighted_bm25=sparse_first == fused_first == ids[0])
        except Exception as exc:  # noqa: BLE001 - a refusal is the answer
            logger.debug("feature probe refused (bm25=%s): %s", bm25, exc)
            return Capabilities(version, bm25=bm25, hybrid_search=False)
        finally:
            _drop_quietly(client, name)


def _drop_quietly(client: MilvusClient, name: str) -> None:
    try:
        if client.has_collection(name):
            client.drop_collection(name)
    except Exception:  # noqa: BLE001 - a leftover probe collection is hidden from listings
        logger.debug("dropping probe collection %s failed", name, exc_info=True)
