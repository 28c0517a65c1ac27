"""Collection info (description, embedding model, dimension) where the server drops properties.

Milvus keeps them as collection properties, but the milvus-lite 2.5 engine accepts
properties and silently drops them (and has no AlterCollection). Without them the
embedding-model guard and the CollectionRouter's descriptions would be lost, so such
servers get one small side collection holding a row per collection. Every read here
follows our own writes, so it asks for Strong consistency.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING

from deepsearcher.types.errors import VectorStoreError
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from pymilvus import CollectionSchema, DataType, MilvusClient

logger = logging.getLogger(__name__)

META_COLLECTION = "_deepsearcher_collections"
NAME, DESCRIPTION, MODEL, DIM, VECTOR = (
    "name",
    "description",
    "embedding_model",
    "dim",
    "v",
)
STRONG = "Strong"

Op = Callable[[str, str | None], AbstractContextManager[None]]


class SideTable:
    """A collection DeepSearcher keeps for itself on one connection: found (or made) on first use."""

    def __init__(self, client: MilvusClient, pymilvus: ModuleType, op: Op) -> None:
        self._client = client
        self._pm = pymilvus
        self._op = op
        self._ready = False


class MetaTable(SideTable):
    """Rows of (collection name → description, embedding model, dim) in META_COLLECTION."""

    def __init__(self, client: MilvusClient, pymilvus: ModuleType, op: Op) -> None:
        super().__init__(client, pymilvus, op)
        self._damaged = False

    def _exists(self) -> bool:
        if self._ready:
            return True
        if self._damaged:
            return False
        with self._op("has_collection", META_COLLECTION):
            if not self._client.has_collection(META_COLLECTION):
                return False
        with self._op("describe_collection", META_COLLECTION):
            fields = {field["name"] for field in self._client.describe_collection(META_COLLECTION).get("fields", [])}
        if not {NAME, DESCRIPTION, MODEL, DIM} <= fields:
            # Something else wrote a collection under this name (older versions let a load do it): reading it
            # would fail every listing. The collections stay usable, without what the table would have said.
            self._damaged = True
            logger.warning(
                "DeepSearcher's metadata collection '%s' does not hold its own fields (something else created it); "
                "collection descriptions and models are not read from it. Drop it to repair: it is rebuilt as "
                "collections are loaded again.",
                META_COLLECTION,
            )
            return False
        with self._op("load_collection", META_COLLECTION):
            self._client.load_collection(META_COLLECTION)
        self._ready = True
        return True

    def _create(self) -> None:
        def fields(schema: CollectionSchema, data_type: type[DataType]) -> None:
            schema.add_field(DESCRIPTION, data_type.VARCHAR, max_length=65535)
            schema.add_field(MODEL, data_type.VARCHAR, max_length=1024)
            schema.add_field(DIM, data_type.INT64)

        create_side_collection(self._client, self._pm, self._op, META_COLLECTION, fields)
        self._ready = True

    def read(self, names: list[str] | None = None) -> dict[str, JSONObject]:
        """Stored rows keyed by collection name (only `names` when given)."""
        if not self._exists() or names == []:
            return {}
        expr = f"{NAME} in {json.dumps(list(names))}" if names else f'{NAME} != ""'
        with self._op("query", META_COLLECTION):
            rows = self._client.query(
                META_COLLECTION,
                filter=expr,
                output_fields=[NAME, DESCRIPTION, MODEL, DIM],
                consistency_level=STRONG,
            )
        return {row[NAME]: row for row in rows}

    def write(self, name: str, description: str | None, embedding_model: str | None, dim: int | None) -> None:
        """Record (or replace) the row of collection `name`."""
        if not self._exists():
            if self._damaged:
                raise VectorStoreError(
                    f"Cannot record collection '{name}': DeepSearcher's metadata collection '{META_COLLECTION}' was "
                    "created by something else. Drop that collection (it is rebuilt), then load again."
                )
            self._create()
        row = {
            NAME: name,
            DESCRIPTION: description,
            MODEL: embedding_model or "",
            DIM: int(dim or 0),
            VECTOR: [0.0, 0.0],
        }
        self.forget(name)
        with self._op("insert", META_COLLECTION):
            self._client.insert(META_COLLECTION, [row])

    def forget(self, name: str) -> None:
        """Remove the row of a dropped collection."""
        if not self._exists():
            return
        with self._op("delete", META_COLLECTION):
            self._client.delete(META_COLLECTION, filter=f"{NAME} == {json.dumps(name)}")


def create_side_collection(
    client: MilvusClient,
    pymilvus: ModuleType,
    op: Op,
    name: str,
    add_fields: Callable[[CollectionSchema, type[DataType]], None],
) -> None:
    """A small Strong collection DeepSearcher keeps for itself: a VARCHAR key `name`, the fields
    `add_fields(schema, DataType)` adds, and the 2-float vector Milvus requires of every collection."""
    schema = pymilvus.MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field(NAME, pymilvus.DataType.VARCHAR, is_primary=True, max_length=256)
    add_fields(schema, pymilvus.DataType)
    schema.add_field(VECTOR, pymilvus.DataType.FLOAT_VECTOR, dim=2)
    index = client.prepare_index_params()
    index.add_index(VECTOR, index_type="FLAT", metric_type="L2")
    with op("create_collection", name):
        client.create_collection(name, schema=schema, consistency_level=STRONG)
        client.create_index(name, index, sync=False)
        client.load_collection(name)
