"""Upstream's newest providers and constructor keywords, each against a real HTTP server on
127.0.0.1 (tests/website_server.py's LocalServer, the scripted OpenAI-compatible server)."""

from __future__ import annotations

import json

import pytest
from website_server import LocalServer, Reply

from deepsearcher.app.components import create_provider
from deepsearcher.configuration import Configuration
from deepsearcher.embedding import JiekouAIEmbedding, MiniMaxEmbedding, OllamaEmbedding
from deepsearcher.embedding._http import EmbeddingError
from deepsearcher.llm import XAI, AtlasCloud, AzureOpenAI, MiniMax
from deepsearcher.loader.web_crawler import CrwCrawler
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types.errors import ConfigurationError, MissingAPIKeyError

server = scripted_llm_fixture(name="server", fallback="scripted answer")


def minimax_reply(request) -> Reply:  # noqa: ANN001 - website_server.Request
    body = request.json()
    vectors = [[float(len(text)), 1.0 if body["type"] == "query" else 0.0] for text in body["texts"]]
    return Reply(json.dumps({"vectors": vectors, "base_resp": {"status_code": 0}}), content_type="application/json")


def openai_reply(request) -> Reply:  # noqa: ANN001
    body = request.json()
    texts = body["input"]
    data = [{"index": i, "embedding": [float(len(text)), 0.5]} for i, text in enumerate(texts)]
    return Reply(json.dumps({"data": data, "model": body["model"]}), content_type="application/json")


def test_minimax_embedding_sends_query_and_db_types_in_batches_of_32(monkeypatch) -> None:
    monkeypatch.setenv("MINIMAX_API_KEY", "mm-key")
    with LocalServer({"/v1/embeddings": minimax_reply}) as site:
        monkeypatch.setenv("MINIMAX_BASE_URL", site.url("/v1"))
        embedding = MiniMaxEmbedding()
        assert (embedding.model, embedding.dimension, embedding.batch_size) == ("embo-01", 1536, 32)
        assert embedding.embed_query("four") == [4.0, 1.0]
        vectors = embedding.embed_documents([f"text {i}" for i in range(50)])
    bodies = [request.json() for request in site.requests]
    assert [(body["type"], len(body["texts"])) for body in bodies] == [("query", 1), ("db", 32), ("db", 18)]
    assert {body["model"] for body in bodies} == {"embo-01"}
    assert site.requests[0].headers["authorization"] == "Bearer mm-key"
    assert len(vectors) == 50 and vectors[0] == [6.0, 0.0]


def test_minimax_embedding_reports_minimax_own_error_code(monkeypatch) -> None:
    error = {"vectors": None, "base_resp": {"status_code": 1004, "status_msg": "login fail"}}
    with LocalServer({"/v1/embeddings": Reply(json.dumps(error), content_type="application/json")}) as site:
        embedding = MiniMaxEmbedding(api_key="bad", base_url=site.url("/v1"), max_retries=0)
        with pytest.raises(EmbeddingError, match="MiniMax error 1004: login fail"):
            embedding.embed_query("x")


def test_model_name_is_the_model_for_jiekou_and_ollama(monkeypatch) -> None:
    ollama = {"/api/embed": lambda r: Reply(json.dumps({"embeddings": [[1.0, 2.0]]}), content_type="application/json")}
    with LocalServer({"/v1/embeddings": openai_reply, **ollama}) as site:
        jiekou = JiekouAIEmbedding(model_name="qwen/qwen3-embedding-0.6b", api_key="k", base_url=site.url("/v1"))
        assert jiekou.model == "qwen/qwen3-embedding-0.6b" and jiekou.dimension == 1024
        jiekou.embed_query("hello")
        ollama_model = OllamaEmbedding(model_name="nomic-embed-text", base_url=site.url("/"))
        assert ollama_model.embed_query("hello") == [1.0, 2.0]
    sent = [request.json() for request in site.requests]
    assert sent[0]["model"] == "qwen/qwen3-embedding-0.6b" and "model_name" not in sent[0]
    assert sent[1]["model"] == "nomic-embed-text" and "model_name" not in sent[1]
    with pytest.raises(ConfigurationError, match="disagree"):
        JiekouAIEmbedding(model="baai/bge-m3", model_name="other", api_key="k")


def test_upstream_defaults_and_missing_key_is_a_runtime_error(monkeypatch, server) -> None:
    for name in ("JIEKOU_API_KEY", "MINIMAX_API_KEY", "ATLASCLOUD_API_KEY", "MINIMAX_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for make in (JiekouAIEmbedding, MiniMaxEmbedding):  # upstream's embeddings refused at construction
        with pytest.raises(RuntimeError) as missing:
            make()
        assert isinstance(missing.value, MissingAPIKeyError)
    for llm_class in (MiniMax, AtlasCloud):  # upstream's LLMs were made without a key: ours too...
        llm = llm_class(model="m", base_url=server.base_url)
        assert llm.model == "m"
        with pytest.raises(RuntimeError, match=f"No API key for {llm_class.__name__}") as missing:
            llm.chat("hi")  # ... and the first call names the key before any request goes out
        assert isinstance(missing.value, MissingAPIKeyError) and not server.requests
    config = Configuration()
    config.set_provider_config("llm", "MiniMax", {"model": "m"})
    with pytest.raises(MissingAPIKeyError, match="MINIMAX_API_KEY"):
        create_provider(config, "llm")  # a configured LLM (CLI, REST, MCP, init_config) fails when it is built
    assert JiekouAIEmbedding(api_key="k").model == "baai/bge-m3"
    assert (MiniMax(api_key="k").model, MiniMax(api_key="k").base_url) == ("MiniMax-M2.7", "https://api.minimax.io/v1")
    atlas = AtlasCloud(api_key="k")
    assert (atlas.model, atlas.base_url) == ("deepseek-ai/deepseek-v4-pro", "https://api.atlascloud.ai/v1")
    assert XAI(api_key="k").model == "grok-4"


@pytest.mark.parametrize("provider, key_env", [(MiniMax, "MINIMAX_API_KEY"), (AtlasCloud, "ATLASCLOUD_API_KEY")])
def test_minimax_and_atlascloud_chat_through_their_env_vars(server, monkeypatch, provider, key_env) -> None:
    monkeypatch.setenv(key_env, "the-key")
    if provider is MiniMax:
        monkeypatch.setenv("MINIMAX_BASE_URL", server.base_url)
        llm = provider(model="MiniMax-M2.5-highspeed")
    else:
        llm = provider(model="deepseek-ai/DeepSeek-V3.1", base_url=server.base_url)
    assert llm.chat([{"role": "user", "content": "hello"}]).content == "scripted answer"
    assert server.requests[-1].headers["authorization"] == "Bearer the-key"
    assert server.requests[-1].body["model"] == llm.model


def test_azure_reads_deepsearchers_azure_openai_key(monkeypatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("AZURE_OPENAI_KEY", "old-name-key")
    llm = AzureOpenAI(model="gpt-4o", azure_endpoint="https://example.openai.azure.com")
    assert llm._api_key == "old-name-key"


def test_crw_crawler_scrapes_through_a_self_hosted_crw(monkeypatch) -> None:
    page = {"success": True, "data": {"markdown": "# Example\nHello.", "metadata": {"title": "Example"}}}
    with LocalServer({"/v1/scrape": Reply(json.dumps(page), content_type="application/json")}) as site:
        monkeypatch.setenv("CRW_API_KEY", "crw-key")
        monkeypatch.setenv("CRW_API_URL", site.url("/").rstrip("/"))
        documents = CrwCrawler().crawl_url("https://example.com/")
    assert [doc.page_content for doc in documents] == ["# Example\nHello."]
    assert documents[0].metadata["title"] == "Example"
    assert site.requests[0].headers["authorization"] == "Bearer crw-key"
    assert site.requests[0].json()["url"] == "https://example.com/"


def test_crw_crawler_defaults_to_fastcrw_cloud(monkeypatch) -> None:
    monkeypatch.delenv("CRW_API_URL", raising=False)
    assert CrwCrawler(api_key="k").api_url == "https://fastcrw.com/api"


def test_deepsearchers_oldest_import_paths() -> None:
    from deepsearcher.agent import prompt, prompts
    from deepsearcher.tools import log
    from deepsearcher.utils import log as utils_log

    assert log.color_print is utils_log.color_print and log.set_dev_mode is utils_log.set_dev_mode
    assert prompt.ANSWER == prompts.ANSWER
