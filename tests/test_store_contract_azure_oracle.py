"""The shipped store contract (deepsearcher.testing.vector_store_contract) run against the two
stores DeepSearcher had that we reach only through stand-ins: AzureSearch against the local
Azure AI Search REST stand-in (real HTTP on 127.0.0.1, tests/azure_search_server.py) and
OracleDB over the stand-in `oracledb` driver (SQLite behind the driver's API,
tests/fake_oracledb.py: no Oracle database can run here, the one mocked part)."""

from __future__ import annotations

import sys

import pytest
from azure_search_server import KEY, AzureSearchStandIn

from deepsearcher.testing.store_corpus import QUERY
from deepsearcher.testing.vector_store_contract import StoreBackend, VectorStoreContractTests
from deepsearcher.types import VectorStoreError
from deepsearcher.vector_db.azure_search import AzureSearch
from deepsearcher.vector_db.oracle_db import OracleDB


class TestAzureSearchStandIn(VectorStoreContractTests):
    @pytest.fixture
    def backend(self, monkeypatch):
        monkeypatch.delenv("AZURE_SEARCH_API_KEY", raising=False)
        stand_in = AzureSearchStandIn()
        backend = StoreBackend(lambda **kw: AzureSearch(endpoint=stand_in.url, api_key=KEY, **kw))
        yield backend
        backend.cleanup()
        stand_in.close()


class TestOracleDBStandIn(VectorStoreContractTests):
    @pytest.fixture
    def backend(self, monkeypatch, tmp_path):
        import fake_oracledb

        monkeypatch.setitem(sys.modules, "oracledb", fake_oracledb.module(str(tmp_path / "oracle.sqlite")))

        def open_store(hybrid: bool = True, **kw):  # noqa: ARG001 - dense only: there is no BM25 to switch
            return OracleDB(user="u", password="p", dsn="localhost/FREEPDB1", **kw)

        backend = StoreBackend(open_store, has_bm25=False)
        yield backend
        backend.cleanup()

    def assert_dense_only(self, store, docs, vector, dense, caplog) -> None:
        """No BM25 in this store: hybrid (the default with a query text) is the dense ranking, and
        a BM25 search is refused naming the store."""
        hybrid = store.search_data(docs, vector, top_k=3, query_text=QUERY, mode="hybrid")
        assert [r.text for r in hybrid] == [r.text for r in dense]
        with pytest.raises(VectorStoreError, match=r"OracleDB at localhost/FREEPDB1 has no BM25"):
            store.search_data(docs, vector, top_k=3, query_text=QUERY, mode="sparse")
