"""One BaseVectorDB contract, run against every store: Milvus Lite and Qdrant local mode
(both in a temp dir), two real Milvus servers on loopback (Milvus 2.3.5 standalone and the
milvus-lite 2.5.1 engine over TCP, started once per session by the `milvus_servers`
fixture), and a Qdrant server too when QDRANT_URL is set (no Qdrant server package exists
to start one here).

The tests themselves are the mixins shipped in `deepsearcher.testing.vector_store_contract`
(so another store's author runs the same contract); each class below only says how to open
its store. Real embeddings (the bundled MiniLM) and real stores; nothing is mocked. On a
shared server every collection name gets a per-test prefix and is dropped afterwards.
"""

from __future__ import annotations

import os

import pytest

from deepsearcher.testing.vector_store_contract import StoreBackend, VectorStoreContractTests
from deepsearcher.vector_db.milvus import Milvus
from deepsearcher.vector_db.qdrant import Qdrant


class TestMilvusLite(VectorStoreContractTests):
    @pytest.fixture
    def backend(self, tmp_path):
        backend = StoreBackend(lambda **kw: Milvus(uri=str(tmp_path / "milvus.db"), **kw))
        yield backend
        backend.cleanup()


class _MilvusServer(VectorStoreContractTests):
    """A real server from the `milvus_servers` pool (started once per session; a failed start fails the test)."""

    server = ""
    has_bm25 = True

    @pytest.fixture
    def backend(self, milvus_servers):
        uri = milvus_servers.get(self.server).uri
        backend = StoreBackend(lambda **kw: Milvus(uri=uri, **kw), shared=True, has_bm25=self.has_bm25)
        yield backend
        backend.cleanup()


class TestMilvus235Server(_MilvusServer):
    server = "milvus-2.3.5"
    has_bm25 = False  # no BM25 functions before Milvus 2.5


class TestMilvusLite251Engine(_MilvusServer):
    server = "milvus-lite-2.5.1-tcp"


class TestQdrantLocal(VectorStoreContractTests):
    @pytest.fixture
    def backend(self, tmp_path):
        backend = StoreBackend(lambda **kw: Qdrant(path=str(tmp_path / "qdrant"), **kw))
        yield backend
        backend.cleanup()


if os.environ.get("QDRANT_URL"):

    class TestQdrantServer(VectorStoreContractTests):
        @pytest.fixture
        def backend(self):
            url, key = os.environ["QDRANT_URL"], os.environ.get("QDRANT_API_KEY")
            backend = StoreBackend(lambda **kw: Qdrant(url=url, api_key=key, **kw), shared=True)
            yield backend
            backend.cleanup()
