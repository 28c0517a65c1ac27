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


SERVER_NAMES = ("milvus-2.3.5", "milvus-lite-2.5.1-tcp")


@pytest.mark.parametrize("server", SERVER_NAMES)
def test_every_read_right_after_our_own_writes_sees_them(milvus_servers, embedding, server):
    """Each read straight after a write (nothing waits in between) sees it: the search at
    Session (at Bounded it missed a row inserted just before 10 times in 10,
    benchmarks/consistency.py), counts Strong, listings at the collection's Strong."""
    from helpers import DISTRACTORS, TARGET, make_chunks

    with Milvus(uri=milvus_servers.get(server).uri, hybrid=False) as store:
        store.init_collection(embedding.dimension, "ryw", embedding_model=MODEL, force_new_collection=True)
        assert store._search_level == {"consistency_level": "Session"}
        if server == "milvus-2.3.5":  # created Strong (0) for pymilvus's query_iterator (milvus.py docstring)
            assert store.client.describe_collection("ryw")["consistency_level"] == 0
        store.insert_data("ryw", make_chunks(embedding, [TARGET, *DISTRACTORS], reference="a.txt"))
        hits = store.search_data("ryw", embedding.embed_query(TARGET), top_k=6)
        assert len(hits) == 6 and hits[0].text == TARGET
        store.insert_data("ryw", make_chunks(embedding, DISTRACTORS[:3], reference="b.txt"))
        assert store.count("ryw") == 9
        assert {ref: rec.chunk_count for ref, rec in store.list_sources("ryw").items()} == {"a.txt": 6, "b.txt": 3}
        assert len(store.stored_chunks("ryw", "b.txt")) == 3
        assert store.delete_by_reference("ryw", "a.txt") == 6  # delete, then insert its replacement
        assert store.count("ryw") == 3 and "a.txt" not in store.list_sources("ryw")
        store.insert_data("ryw", make_chunks(embedding, [TARGET], reference="a.txt"))
        assert {ref: rec.chunk_count for ref, rec in store.list_sources("ryw").items()} == {"a.txt": 1, "b.txt": 3}
        store.clear_db("ryw")


def test_searches_no_longer_wait_for_the_collections_strong_level_unless_asked(milvus_servers, embedding):
    """Collections made here (and by earlier versions) are Strong; searches name Session, so
    they skip the time-tick wait and still see what this store just wrote. With
    search_consistency="collection" a search uses the collection's Strong again."""
    from helpers import TARGET, loaded

    uri = milvus_servers.get("milvus-2.3.5").uri
    with Milvus(uri=uri, hybrid=False) as store:
        loaded(store, embedding, "was_strong", force_new_collection=True)
        hits = store.search_data("was_strong", embedding.embed_query(TARGET), top_k=6)
        assert len(hits) == 6 and hits[0].text == TARGET
    with Milvus(uri=uri, hybrid=False, search_consistency="collection") as own_level:
        assert own_level._search_level == {}  # no level named: the collection's Strong
        loaded(own_level, embedding, "was_strong", texts=[TARGET])
        hits = own_level.search_data("was_strong", embedding.embed_query(TARGET), top_k=10)
        assert [hit.text for hit in hits].count(TARGET) == 2
        own_level.clear_db("was_strong")


def test_a_server_that_cannot_start_is_an_error_with_its_log(monkeypatch, tmp_path):
    import sys
    import tempfile

    from deepsearcher.testing import milvus_servers as ms

    class Broken(ms._Server):
        name = "broken"

        def _command(self):
            return [sys.executable, "-c", "print('cannot bind port'); raise SystemExit(3)"], {}, self.data_dir

        def _ready(self):
            return False

    monkeypatch.setitem(ms.SERVERS, "broken", Broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the log the error names is kept: in pytest's dir
    pool = ms.ServerPool()
    with pytest.raises(ms.ServerStartError, match=r"broken exited with code 3.*cannot bind port"):
        pool.get("broken")
    with pytest.raises(ms.ServerStartError, match="code 3"):  # remembered: not started again
        pool.get("broken")
