"""Subclasses written against upstream's small bases (tests/upstream_shapes.py) are accepted,
and our pipeline, search, query and CLI run with them; a class that is neither shape is refused
naming what it lacks. The LLM is the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import ANSWER_PROMPT, last_request
from typer.testing import CliRunner
from upstream_shapes import JsonFileStore, QueryOnlyEmbedding, UpperCaseLoader, UrllibCrawler
from website_server import LocalServer, Reply

from deepsearcher.cli.main import app
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.loader.web_crawler.base import BaseCrawler
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types import Chunk
from deepsearcher.vector_db.base import BaseVectorDB

server = scripted_llm_fixture(name="server", fallback="NO")
runner = CliRunner()


def test_a_store_of_neither_shape_is_refused_naming_upstreams_methods() -> None:
    class Empty(BaseVectorDB):
        pass

    with pytest.raises(TypeError) as refused:
        Empty()  # type: ignore[abstract]
    for name in ("init_collection", "insert_data", "search_data", "clear_db"):
        assert name in str(refused.value)


def test_one_of_our_stores_missing_a_hook_is_refused_naming_the_hook() -> None:
    class HalfDone(BaseVectorDB):
        def _exists(self, name):  # type: ignore[no-untyped-def]
            return False

    with pytest.raises(TypeError) as refused:
        HalfDone()  # type: ignore[abstract]
    message = str(refused.value)
    assert "_insert" in message and "_search" in message and "list_sources" in message
    assert "'init_collection'" not in message  # judged by our richer contract, not upstream's


def test_embedding_and_crawler_of_neither_shape_are_refused() -> None:
    class NoVectors(BaseEmbedding):
        dimension = 3  # type: ignore[assignment]

    class NoCrawl(BaseCrawler):
        pass

    with pytest.raises(TypeError, match="embed_documents"):
        NoVectors()  # type: ignore[abstract]
    with pytest.raises(TypeError, match="_run"):
        NoCrawl()  # type: ignore[abstract]


def test_an_upstream_store_misses_only_what_it_never_had(tmp_path: Path) -> None:
    store = JsonFileStore(str(tmp_path / "store.json"))
    store.init_collection(3, "notes", "my notes", embedding_model="ours")  # a keyword its signature lacks
    chunks = [Chunk(text="a", reference="a.txt", embedding=[1.0, 0.0, 0.0])]
    assert store.insert_data("notes", chunks) == 1  # upstream's returned None: the count is ours
    hits = store.search_data("notes", [1.0, 0.0, 0.0], top_k=1, query_text="a")
    assert [hit.text for hit in hits] == ["a"]
    assert store.get_collection_info("notes").description == "my notes"
    assert store.get_collection_info("absent") is None
    assert store.list_sources("notes") == {} and store.has_documents("notes")
    with pytest.raises(NotImplementedError, match=r"JsonFileStore does not implement delete_by_reference"):
        store.delete_by_reference("notes", "a.txt")


def test_pipeline_loads_with_upstream_embedding_loader_and_store(tmp_path: Path, embedding) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hopper.txt").write_text("Grace Hopper wrote the first compiler.", encoding="utf-8")
    (docs / "lovelace.txt").write_text("Ada Lovelace wrote the first program.", encoding="utf-8")
    upstream_embedding = QueryOnlyEmbedding(embedding)
    store = JsonFileStore(str(tmp_path / "store.json"))
    pipeline = IngestionPipeline(embedding=upstream_embedding, vector_db=store, chunk_size=200, chunk_overlap=0)
    summary = pipeline.run(iter_file_sources([docs], UpperCaseLoader()), collection_name="people")
    assert summary.chunks_inserted == 2
    assert upstream_embedding.query_calls == 2  # embed_documents was built from embed_query
    hits = store.search_data("people", upstream_embedding.embed_query("who wrote a compiler?"), top_k=1)
    assert hits[0].text == "GRACE HOPPER WROTE THE FIRST COMPILER."


def test_an_upstream_crawler_reports_each_url_and_its_failure() -> None:
    with LocalServer({"/page": Reply("<p>hello from the page</p>")}) as site:
        crawler = UrllibCrawler()
        report = crawler.crawl([site.url("/page"), site.url("/missing")])
    assert [doc.page_content for doc in report.documents] == ["<p>hello from the page</p>"]
    assert report.failure_for(site.url("/missing")).startswith("HTTPError: HTTP Error 404")


def test_cli_load_search_and_query_through_an_upstream_store(tmp_path: Path, server) -> None:
    config = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {
            "llm": server.llm_config(retry_base_delay=0.01),
            "vector_db": {"provider": "upstream_shapes:JsonFileStore", "config": {"path": str(tmp_path / "s.json")}},
        }
    }
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hopper.md").write_text("# Grace Hopper\n\nGrace Hopper built the first compiler.", encoding="utf-8")
    (docs / "curie.md").write_text("# Marie Curie\n\nMarie Curie studied radioactivity.", encoding="utf-8")

    loaded = runner.invoke(app, ["load", str(docs), "--collection-name", "science", "-c", str(config)])
    assert loaded.exit_code == 0, loaded.output
    found = runner.invoke(app, ["search", "who built the first compiler", "-c", str(config), "--json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["results"][0]["reference"].endswith("hopper.md")

    server.on("Answer the question using only the numbered sources", "Grace Hopper built it [1].")
    asked = runner.invoke(
        app, ["query", "Who built the first compiler?", "--agent", "naive", "-c", str(config), "--json"]
    )
    assert asked.exit_code == 0, asked.output
    result = json.loads(asked.stdout)
    assert result["answer"] == "Grace Hopper built it [1]."
    assert "Grace Hopper built the first compiler." in last_request(server, ANSWER_PROMPT).last_user_message
