"""DeepSearcher's provider names that we lacked, each against a real local stand-in of its API.

OpenAI-compatible embeddings (PPIO, Volcengine, GLM, Jiekou.AI) run against the fake
embeddings server of test_embedding_providers; JiekouAI's chat against the scripted LLM
server; watsonx.ai against a stand-in speaking IBM Cloud IAM (form-encoded token
exchange) and the watsonx.ai REST API. Docling is an optional extra not installed here:
its missing-extra error is tested, and DoclingCrawler's flow with a stand-in converter.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from stand_in import JSONHandler, StandIn
from test_embedding_providers import api_factory, openai_reply, vector_for  # noqa: F401 - fixture reused

from deepsearcher.cli.providers_cmd import collect
from deepsearcher.embedding import registry as embedding_registry
from deepsearcher.llm import registry as llm_registry
from deepsearcher.llm.errors import MissingAPIKeyError
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types.errors import ConfigurationError, MissingDependencyError

server = scripted_llm_fixture(name="server", fallback="answer from the stand-in")

COMPATIBLE_EMBEDDINGS = [
    ("PPIOEmbedding", "PPIO_API_KEY", "baai/bge-m3", 1024, "https://api.ppinfra.com/v3/openai"),
    (
        "VolcengineEmbedding",
        "VOLCENGINE_API_KEY",
        "doubao-embedding-large-text-240915",
        4096,
        "https://ark.cn-beijing.volces.com/api/v3",
    ),
    ("GLMEmbedding", "GLM_API_KEY", "embedding-3", 2048, "https://open.bigmodel.cn/api/paas/v4"),
    ("JiekouAIEmbedding", "JIEKOU_API_KEY", "baai/bge-m3", 1024, "https://api.jiekou.ai/openai/v1"),
]
WATSONX_ENV = ("WATSONX_APIKEY", "WATSONX_API_KEY", "WATSONX_URL", "WATSONX_PROJECT_ID", "WATSONX_IAM_URL")


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        *WATSONX_ENV,
        "JIEKOU_API_KEY",
        "PPIO_API_KEY",
        "VOLCENGINE_API_KEY",
        "ARK_API_KEY",
        "GLM_API_KEY",
        "ZHIPUAI_API_KEY",
        "JINA_API_KEY",
        "JINAAI_API_KEY",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("name", "env_var", "model", "dim", "url"), COMPATIBLE_EMBEDDINGS)
def test_openai_compatible_embedding_names(api_factory, monkeypatch, name, env_var, model, dim, url):  # noqa: F811
    cls = embedding_registry.get(name)
    assert embedding_registry.info(name).env_var == env_var
    with pytest.raises(MissingAPIKeyError, match=env_var):
        cls()
    monkeypatch.setenv(env_var, "secret-key")
    default = cls()
    assert (default.model, default.base_url, default.dimension) == (model, url, dim)  # known: no network
    api = api_factory(openai_reply)
    emb = cls(base_url=api.url, model="m", dimension=4)
    assert emb.embed_documents(["one", "three"]) == [vector_for("one"), vector_for("three")]
    [request] = api.requests
    assert request["path"] == "/embeddings"
    assert request["headers"]["authorization"] == "Bearer secret-key"
    assert request["body"]["input"] == ["one", "three"] and request["body"]["model"] == "m"


def test_jiekouai_llm_and_its_readme_spelling(monkeypatch, server):
    assert llm_registry.get("Jiekou.AI") is llm_registry.get("JiekouAI")
    with pytest.raises(MissingAPIKeyError, match="JIEKOU_API_KEY"):
        llm_registry.get("JiekouAI")().chat("hi")
    monkeypatch.setenv("JIEKOU_API_KEY", "jk-key")
    default = llm_registry.get("JiekouAI")()
    assert (default.base_url, default.model) == ("https://api.jiekou.ai/openai/v1", "claude-sonnet-4-5-20250929")
    llm = llm_registry.get("JiekouAI")(base_url=server.base_url)
    assert llm.chat("hi").content == "answer from the stand-in"
    assert server.requests[-1].authorization == "Bearer jk-key"


class WatsonXStandIn(StandIn):
    """IBM Cloud IAM (/identity/token) and watsonx.ai (/ml/v1/text/chat, /ml/v1/text/embeddings)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.tokens_issued = 0
        stand_in = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                raw = self.body()
                parts = urlsplit(self.path)
                headers = {key.lower(): value for key, value in self.headers.items()}
                if parts.path == "/identity/token":
                    form = {key: values[0] for key, values in parse_qs(raw.decode()).items()}
                    stand_in.requests.append({"path": parts.path, "form": form})
                    if (
                        form.get("apikey") != "ibm-key"
                        or form.get("grant_type") != "urn:ibm:params:oauth:grant-type:apikey"
                    ):
                        return self.reply(400, {"errorMessage": "Provided API key could not be found."})
                    stand_in.tokens_issued += 1
                    return self.reply(200, {"access_token": f"tok-{stand_in.tokens_issued}", "expires_in": 3600})
                body = json.loads(raw)
                stand_in.requests.append(
                    {"path": parts.path, "query": parse_qs(parts.query), "body": body, "headers": headers}
                )
                if not headers.get("authorization", "").startswith("Bearer tok-"):
                    return self.reply(401, {"errors": [{"message": "token missing"}]})
                if parts.path == "/ml/v1/text/chat":
                    text = body["messages"][-1]["content"]
                    return self.reply(
                        200,
                        {
                            "model_id": body["model_id"],
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": f"echo: {text}"},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
                        },
                    )
                if parts.path == "/ml/v1/text/embeddings":
                    results = [{"embedding": vector_for(text)} for text in body["inputs"]]
                    return self.reply(200, {"model_id": body["model_id"], "results": results, "input_token_count": 3})
                return self.reply(404, {"errors": [{"message": "no such path"}]})

        super().__init__(Handler)


@pytest.fixture
def watsonx(monkeypatch: pytest.MonkeyPatch):
    stand_in = WatsonXStandIn()
    monkeypatch.setenv("WATSONX_APIKEY", "ibm-key")
    monkeypatch.setenv("WATSONX_URL", stand_in.url)
    monkeypatch.setenv("WATSONX_PROJECT_ID", "proj-1")
    monkeypatch.setenv("WATSONX_IAM_URL", stand_in.url)
    from deepsearcher.transport import watsonx as _watsonx

    monkeypatch.setattr(_watsonx, "_tokens", {})
    yield stand_in
    stand_in.close()


def test_watsonx_llm_exchanges_the_key_for_a_token_and_chats(watsonx):
    assert llm_registry.get("watsonx") is llm_registry.get("WatsonX")  # the README's spelling
    llm = llm_registry.get("WatsonX")(model="ibm/granite-13b-instruct-v2", max_tokens=50)
    first = llm.chat("hello there")
    second = llm.chat("again")
    assert (first.content, first.total_tokens, second.content) == ("echo: hello there", 7, "echo: again")
    chats = [request for request in watsonx.requests if request["path"] == "/ml/v1/text/chat"]
    assert watsonx.tokens_issued == 1  # cached between calls
    assert chats[0]["body"]["model_id"] == "ibm/granite-13b-instruct-v2"
    assert chats[0]["body"]["project_id"] == "proj-1" and chats[0]["body"]["max_tokens"] == 50
    assert chats[0]["query"]["version"] == ["2024-10-08"]
    assert chats[0]["headers"]["authorization"] == "Bearer tok-1"


def test_watsonx_embedding_and_clear_errors(watsonx, monkeypatch):
    emb = embedding_registry.get("WatsonXEmbedding")(space_id="space-9")
    assert emb.dimension == 768  # ibm/slate-125m-english-rtrvr-v2, known
    assert emb.embed_documents(["a", "bbb"]) == [vector_for("a"), vector_for("bbb")]
    [request] = [r for r in watsonx.requests if r["path"] == "/ml/v1/text/embeddings"]
    assert request["body"]["inputs"] == ["a", "bbb"] and request["body"]["space_id"] == "space-9"
    assert "project_id" not in request["body"] and request["body"]["parameters"] == {"truncate_input_tokens": 512}

    monkeypatch.delenv("WATSONX_PROJECT_ID")
    with pytest.raises(ConfigurationError, match="WATSONX_PROJECT_ID"):
        embedding_registry.get("WatsonXEmbedding")()
    monkeypatch.setenv("WATSONX_PROJECT_ID", "proj-1")
    monkeypatch.setenv("WATSONX_APIKEY", "wrong-key")
    from deepsearcher.types import DeepSearcherError

    with pytest.raises(DeepSearcherError, match="refused the API key .*WATSONX_APIKEY"):
        embedding_registry.get("WatsonXEmbedding")().embed_query("x")


def test_milvus_embedding_default_is_the_bundled_model_said_once(caplog):
    cls = embedding_registry.get("MilvusEmbedding")
    with caplog.at_level(logging.WARNING, logger="deepsearcher.embedding.milvus_embedding"):
        emb = cls(model="default")
    assert (emb.model_name, emb.dimension) == ("all-MiniLM-L6-v2", 384)
    assert len(emb.embed_query("hello")) == 384
    lines = [record.getMessage() for record in caplog.records if record.name.endswith("milvus_embedding")]
    assert len(lines) == 1 and "bundled all-MiniLM-L6-v2" in lines[0]


def test_milvus_embedding_model_not_on_this_machine_says_no_download():
    emb = embedding_registry.get("MilvusEmbedding")(model="BAAI/bge-base-en-v1.5")  # loads on first use
    with pytest.raises(
        OSError, match=r"(?s)Cannot load the sentence-transformers model 'BAAI/bge-base-en-v1\.5'.*allow_download"
    ):
        emb.embed_query("hello")


def test_milvus_embedding_jina_models_use_jinas_api(api_factory, monkeypatch):  # noqa: F811
    api = api_factory(openai_reply)
    monkeypatch.setenv("JINAAI_API_KEY", "jina-from-upstream-var")
    emb = embedding_registry.get("MilvusEmbedding")(model="jina-embeddings-v3", base_url=api.url)
    assert emb.dimension == 1024
    assert emb.embed_query("q") == vector_for("q", 4)
    assert api.requests[0]["headers"]["authorization"] == "Bearer jina-from-upstream-var"


def test_docling_crawler_names_its_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "docling", None)  # as here: the extra is not installed
    from deepsearcher.loader.web_crawler import registry

    with pytest.raises(MissingDependencyError, match=r"deepsearcher\[docling\]"):
        registry.get("DoclingCrawler")()


def test_new_names_are_listed_with_their_extra_and_env_var():
    rows = {(row["feature"], row["name"]): row for row in collect()}
    assert rows[("llm", "WatsonX")]["env_var"] == "WATSONX_APIKEY"
    assert rows[("llm", "JiekouAI")]["env_var"] == "JIEKOU_API_KEY"
    assert rows[("embedding", "WatsonXEmbedding")]["env_var"] == "WATSONX_APIKEY"
    assert rows[("embedding", "MilvusEmbedding")]["installed"] is True
    assert rows[("web_crawler", "DoclingCrawler")]["extra"] == "docling"


def test_docling_crawler_flow_with_a_stand_in_converter(monkeypatch):
    """docling is not installed here: a stand-in DocumentConverter (the one mocked part)
    returns a stand-in DoclingDocument for one URL and fails for another."""
    import sys
    import types

    from test_unstructured_docling import StandInDoclingDocument

    converted: list[str] = []

    class DocumentConverter:
        def __init__(self, **options: Any) -> None:
            self.options = options

        def convert(self, source: str) -> Any:
            converted.append(source)
            if "broken" in source:
                raise RuntimeError("HTTP 404 for the page")
            return types.SimpleNamespace(document=StandInDoclingDocument({1: "# Moss\n\nSphagnum holds water."}))

    package = types.ModuleType("docling")
    submodule = types.ModuleType("docling.document_converter")
    submodule.DocumentConverter = DocumentConverter
    monkeypatch.setitem(sys.modules, "docling", package)
    monkeypatch.setitem(sys.modules, "docling.document_converter", submodule)
    from deepsearcher.loader.web_crawler import registry

    crawler = registry.get("DoclingCrawler")()
    report = crawler.crawl(["https://example.org/moss", "https://example.org/broken"])
    assert sorted(converted) == ["https://example.org/broken", "https://example.org/moss"]
    [document] = report.documents
    assert (
        document.metadata["reference"] == "https://example.org/moss"
        and "Sphagnum holds water." in document.page_content
    )
    assert document.metadata["section"] == "Moss"
    [failure] = report.failures
    assert failure.url == "https://example.org/broken" and "Docling could not convert it: HTTP 404" in failure.reason
    with pytest.raises(ConfigurationError, match="max_depth_typo"):
        crawler.crawl(["https://example.org/moss"], max_depth_typo=1)
