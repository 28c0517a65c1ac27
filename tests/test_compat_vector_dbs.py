"""DeepSearcher's vector stores we lacked: AzureSearch against a local stand-in of the Azure AI
Search REST API (real HTTP, real MiniLM vectors), and OracleDB: its extra, and its flow through
a stand-in driver (no Oracle database can run here: the one mocked part, see fake_oracledb)."""

from __future__ import annotations

import sys

import pytest
from azure_search_server import KEY, AzureSearchStandIn
from helpers import DISTRACTORS, MODEL, QUERY, TARGET, loaded, make_chunks

from deepsearcher.llm.errors import MissingAPIKeyError
from deepsearcher.types import ConfigurationError, EmbeddingMismatchError, MissingDependencyError, VectorStoreError
from deepsearcher.vector_db import registry


@pytest.fixture
def azure(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("AZURE_SEARCH_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_SEARCH_KEY", raising=False)
    stand_in = AzureSearchStandIn()
    yield stand_in
    stand_in.close()


def open_store(azure: AzureSearchStandIn, **config):
    return registry.get("AzureSearch")(endpoint=azure.url, api_key=KEY, **config)


def test_azure_search_store_round_trip(azure, embedding) -> None:
    store = open_store(azure, index_name="docs")
    chunks = loaded(store, embedding, description="Laptop notes")
    fields = {field["name"]: field for field in azure.indexes["docs"]["fields"]}
    assert fields["content_vector"]["dimensions"] == 384 and fields["index_text"]["searchable"]
    [info] = store.list_collections()
    assert (info.collection_name, info.description, info.dim, info.embedding_model) == (
        "docs",
        "Laptop notes",
        384,
        MODEL,
    )

    dense = store.search_data("docs", embedding.embed_query(TARGET), top_k=2, mode="dense")
    assert dense[0].text == TARGET and dense[0].reference == "doc.txt" and dense[0].score > dense[1].score
    vector = embedding.embed_query(QUERY)
    assert TARGET not in [r.text for r in store.search_data("docs", vector, top_k=3, mode="dense")]
    hybrid = store.search_data("docs", vector, top_k=3, query_text=QUERY)
    assert TARGET in [r.text for r in hybrid]  # the rare ticket number only the text side sees
    filtered = store.search_data("docs", embedding.embed_query(TARGET), top_k=5, filter="reference eq 'other.txt'")
    assert filtered == []

    more = make_chunks(
        embedding, ["A second file about keyboards."], reference="other.txt", source_hash="h2", source_chunks=1
    )
    assert store.insert_data("docs", more) == 1
    sources = store.list_sources("docs")
    assert sorted(sources) == ["doc.txt", "other.txt"] and sources["doc.txt"].chunk_count == len(chunks)
    assert store.delete_by_reference("docs", "other.txt") == 1 and sorted(store.list_sources("docs")) == ["doc.txt"]

    with pytest.raises(EmbeddingMismatchError, match="other-model"):
        store.init_collection(384, "docs", embedding_model="other-model")
    store.clear_db("docs")
    assert store.list_collections() == []
    with pytest.raises(VectorStoreError, match="collection 'docs' does not exist"):
        store.search_data("docs", embedding.embed_query(TARGET))
    store.close()


def test_an_index_made_by_deepsearcher_is_searched(azure, embedding) -> None:
    """DeepSearcher's AzureSearch made indexes with id, content and content_vector only."""
    azure.handle(
        "PUT",
        ["indexes", "legacy"],
        {
            "name": "legacy",
            "fields": [
                {"name": "id", "type": "Edm.String", "key": True},
                {"name": "content", "type": "Edm.String", "searchable": True},
                {"name": "content_vector", "type": "Collection(Edm.Single)", "dimensions": 384},
            ],
        },
    )
    texts = [TARGET, *DISTRACTORS]
    docs = [
        {"@search.action": "upload", "id": f"doc-{i}", "content": text, "content_vector": vector}
        for i, (text, vector) in enumerate(zip(texts, embedding.embed_documents(texts), strict=False))
    ]
    azure.handle("POST", ["indexes", "legacy", "docs", "index"], {"value": docs})
    store = open_store(azure, index_name="legacy", vector_field="")
    info = store.get_collection_info("legacy")
    assert (info.dim, info.embedding_model, info.description) == (384, None, "")
    store.init_collection(384, "legacy", embedding_model=MODEL)  # unknown model: accepted and recorded
    hit = store.search_data("legacy", embedding.embed_query(TARGET), top_k=1, mode="dense")[0]
    assert (hit.text, hit.reference) == (TARGET, "doc-0")
    assert sorted(store.list_sources("legacy")) == [f"doc-{i}" for i in range(len(texts))]
    store.close()


def test_azure_search_needs_endpoint_and_key(azure) -> None:
    with pytest.raises(ConfigurationError, match="AzureSearch needs endpoint"):
        registry.get("AzureSearch")(api_key=KEY)
    with pytest.raises(MissingAPIKeyError, match="AZURE_SEARCH_API_KEY"):
        registry.get("AzureSearch")(endpoint=azure.url)
    wrong = registry.get("AzureSearch")(endpoint=azure.url, api_key="wrong")
    with pytest.raises(VectorStoreError, match=r"AzureSearch list indexes failed .*HTTP 403: Invalid api-key"):
        wrong.list_collections()


def test_oracle_db_is_registered_and_names_its_extra(monkeypatch) -> None:
    info = registry.info("OracleDB")
    assert info is not None and info.extra == "oracledb"
    monkeypatch.setitem(sys.modules, "oracledb", None)  # as here: the driver is not installed
    with pytest.raises(MissingDependencyError, match=r"deepsearcher\[oracledb\]"):
        registry.get("OracleDB")(user="u", password="p", dsn="localhost/FREEPDB1")


def test_oracle_db_flow_on_a_stand_in_driver(monkeypatch, tmp_path, embedding) -> None:
    """No Oracle database can run here: `oracledb` is replaced by fake_oracledb (SQLite behind
    the driver's API), so this checks the store's flow in DeepSearcher's tables, not Oracle."""
    import fake_oracledb

    fake = fake_oracledb.module(str(tmp_path / "oracle.sqlite"))
    monkeypatch.setitem(sys.modules, "oracledb", fake)
    store = registry.get("OracleDB")(user="u", password="p", dsn="localhost/FREEPDB1", wallet_location="/w")
    assert fake.pools[0].options == {
        "user": "u",
        "password": "p",
        "dsn": "localhost/FREEPDB1",
        "min": 1,
        "max": 10,
        "increment": 1,
        "wallet_location": "/w",
    }
    assert fake.defaults.fetch_lobs is False
    chunks = loaded(store, embedding, description="Laptop notes")
    [info] = store.list_collections()
    assert (info.collection_name, info.description, info.dim, info.embedding_model) == (
        "docs",
        "Laptop notes",
        384,
        MODEL,  # recorded in our DEEPSEARCHER_COLLECTION_MODEL table
    )
    hits = store.search_data("docs", embedding.embed_query(TARGET), top_k=2)
    assert hits[0].text == TARGET and hits[0].reference == "doc.txt" and hits[0].score > hits[1].score
    assert store.list_sources("docs")["doc.txt"].chunk_count == len(chunks)
    more = make_chunks(embedding, ["A second file about keyboards."], reference="other.txt")
    store.insert_data("docs", more)
    assert store.delete_by_reference("docs", "other.txt") == 1 and sorted(store.list_sources("docs")) == ["doc.txt"]
    store.clear_db("docs")
    assert store.list_collections() == [] and not store.has_collection("docs")
    store.init_collection(384, "docs")  # a new collection of the same name starts empty (old rows stay soft-deleted)
    assert store.list_sources("docs") == {}
    store.close()
    assert fake.pools[0].closed
