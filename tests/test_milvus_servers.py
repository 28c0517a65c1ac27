"""What the Milvus store finds out about each real server (started once per session by the
`milvus_servers` fixture) and how it keeps collection info where properties are dropped."""

from __future__ import annotations

import pytest
from helpers import MODEL

from deepsearcher.vector_db._milvus_capabilities import from_version, parse_version
from deepsearcher.vector_db._milvus_meta import META_COLLECTION
from deepsearcher.vector_db.milvus import Milvus


@pytest.mark.parametrize(
    ("version", "bm25", "hybrid"),
    [("v2.3.5-lite", False, False), ("2.4.9", False, True), ("v2.5.0", True, True), ("milvus_lite-3.2.2", True, True)],
)
def test_features_follow_the_reported_version(version, bm25, hybrid):
    caps = from_version(version)
    assert (caps.bm25, caps.hybrid_search) == (bm25, hybrid)
    assert parse_version("not a version") is None and from_version("not a version") is None


def test_milvus_235_is_dense_only_by_its_version(milvus_servers):
    with Milvus(uri=milvus_servers.get("milvus-2.3.5").uri) as store:
        caps = store.capabilities
        assert (caps.version, caps.bm25, caps.hybrid_search) == ("2.3.5-lite", False, False)
        assert "BM25 functions and hybrid_search" in caps.lost_features()


def test_lite_engine_is_probed_and_its_inverted_weighted_ranker_found(milvus_servers):
    with Milvus(uri=milvus_servers.get("milvus-lite-2.5.1-tcp").uri) as store:
        caps = store.capabilities
        assert caps.version is None and caps.bm25 and caps.hybrid_search
        assert caps.weighted_bm25 is False  # its WeightedRanker inverts BM25: fused here instead
        assert not [name for name in store.client.list_collections() if name.startswith("_deepsearcher_probe_")]


def test_in_process_lite_reports_its_version(milvus_uri):
    with Milvus(uri=milvus_uri) as store:
        assert store.capabilities.version.startswith("milvus_lite") and store.capabilities.bm25


def test_collection_info_lives_in_a_hidden_side_collection_where_properties_are_dropped(milvus_servers):
    uri = milvus_servers.get("milvus-lite-2.5.1-tcp").uri
    with Milvus(uri=uri) as store:
        store.init_collection(8, "side_info", description="first", embedding_model=MODEL)
        assert store.client.describe_collection("side_info").get("properties") in ({}, None)  # dropped by the engine
        assert META_COLLECTION in store.client.list_collections()
        assert META_COLLECTION not in [info.collection_name for info in store.list_collections()]
        store.init_collection(8, "side_info", description="second", embedding_model=MODEL)
    with Milvus(uri=uri) as reopened:
        info = reopened.get_collection_info("side_info")
        assert (info.description, info.embedding_model, info.dim) == ("second", MODEL, 8)
        reopened.clear_db("side_info")
        assert "side_info" not in reopened._meta_table().read()


def test_session_consistency_searches_still_see_our_own_writes(milvus_servers, embedding):
    from helpers import TARGET, loaded

    with Milvus(uri=milvus_servers.get("milvus-2.3.5").uri, search_consistency="Session", hybrid=False) as store:
        loaded(store, embedding, "session_docs")  # insert, then search at once
        hits = store.search_data("session_docs", embedding.embed_query(TARGET), top_k=6)
        assert len(hits) == 6 and hits[0].text == TARGET
        store.clear_db("session_docs")


def test_a_server_that_cannot_start_is_an_error_with_its_log(monkeypatch):
    import sys

    from deepsearcher.testing import milvus_servers as ms

    class Broken(ms._Server):
        name = "broken"

        def _command(self):
            return [sys.executable, "-c", "print('cannot bind port'); raise SystemExit(3)"], {}, self.data_dir

        def _ready(self):
            return False

    monkeypatch.setitem(ms.SERVERS, "broken", Broken)
    pool = ms.ServerPool()
    with pytest.raises(ms.ServerStartError, match=r"broken exited with code 3.*cannot bind port"):
        pool.get("broken")
    with pytest.raises(ms.ServerStartError, match="code 3"):  # remembered: not started again
        pool.get("broken")
