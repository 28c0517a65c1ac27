"""Remote embedding providers against real HTTP servers on 127.0.0.1 that speak each API.

Each fake server is a ThreadingHTTPServer in a thread: it records every request (path,
headers, JSON body), can be told to fail the next calls (429 with Retry-After, 500), and
answers with vectors derived from the input text, so order and batching are checkable.
Bedrock goes through real boto3 (SigV4 signing, botocore error parsing) against the same
kind of server. LiteLLM and FastEmbed are optional extras that are not installed in CI:
their missing-extra errors are tested (and LiteLLM's adapter against a stand-in module).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import types
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from deepsearcher.embedding import registry
from deepsearcher.embedding._http import EmbeddingError, batched
from deepsearcher.embedding.gemini_embedding import GeminiEmbedding
from deepsearcher.embedding.jina_embedding import JinaEmbedding
from deepsearcher.embedding.novita_embedding import NovitaEmbedding
from deepsearcher.embedding.ollama_embedding import OllamaEmbedding
from deepsearcher.embedding.openai_embedding import OpenAIEmbedding
from deepsearcher.embedding.siliconflow_embedding import SiliconflowEmbedding
from deepsearcher.embedding.voyage_embedding import VoyageEmbedding
from deepsearcher.llm.errors import MissingAPIKeyError
from deepsearcher.types import ConfigurationError, MissingDependencyError

DIM = 4
FAST = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}


def vector_for(text: str, dim: int = DIM) -> list[float]:
    """What the fake servers return: the text's length and first character, then padding."""
    return [float(len(text)), float(ord(text[0]) if text else 0)] + [0.5] * (dim - 2)


class FakeAPI:
    """A real HTTP server; `reply(path, body, headers) -> (status, json)` shapes the answers."""

    def __init__(self, reply: Callable[[str, dict, dict], tuple[int, Any]]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.failures: list[tuple[int, dict[str, str]]] = []  # (status, headers) for the next calls
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else {}
                headers = {key.lower(): value for key, value in self.headers.items()}
                api.requests.append({"path": self.path, "headers": headers, "body": body, "at": time.monotonic()})
                if api.failures:
                    status, extra = api.failures.pop(0)
                    payload: Any = {"error": {"message": f"scripted {status}"}}
                else:
                    status, payload = api.reply(self.path, body, headers)
                    extra = {}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def openai_reply(path: str, body: dict, headers: dict) -> tuple[int, Any]:
    inputs = body["input"]
    dim = body.get("dimensions") or DIM
    # answered in reverse order: clients must sort by index
    data = [{"object": "embedding", "index": i, "embedding": vector_for(text, dim)} for i, text in enumerate(inputs)]
    return 200, {"object": "list", "data": data[::-1], "model": body["model"]}


@pytest.fixture
def api_factory():
    servers: list[FakeAPI] = []

    def make(reply: Callable[[str, dict, dict], tuple[int, Any]] = openai_reply) -> FakeAPI:
        server = FakeAPI(reply)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch):
    """Keys and URLs of the developer's shell must not leak into these tests."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "VOYAGE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "JINA_API_KEY",
        "SILICONFLOW_API_KEY",
        "NOVITA_API_KEY",
        "OLLAMA_HOST",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name, raising=False)


# ---------------------------------------------------------------------- OpenAI and compatibles


def test_openai_request_shape_key_header_and_order(api_factory, monkeypatch):
    api = api_factory()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    emb = OpenAIEmbedding(model="text-embedding-3-small", base_url=api.url + "/v1", dimension=DIM)
    texts = ["alpha", "bb", "cccc"]
    vectors = emb.embed_documents(texts)
    assert vectors == [vector_for(t) for t in texts]  # reply came reversed; order restored by index
    [request] = api.requests
    assert request["path"] == "/v1/embeddings"
    assert request["headers"]["authorization"] == "Bearer sk-test-123"
    assert request["body"] == {
        "model": "text-embedding-3-small",
        "input": texts,
        "encoding_format": "float",
        "dimensions": DIM,
    }
    assert emb.model_name == "text-embedding-3-small"
    assert emb.dimension == DIM and len(api.requests) == 1  # configured: no probe call


def test_openai_known_dimensions_need_no_network():
    assert OpenAIEmbedding(api_key="k", base_url="http://127.0.0.1:9").dimension == 1536
    assert OpenAIEmbedding("text-embedding-3-large", api_key="k", base_url="http://127.0.0.1:9").dimension == 3072
    assert OpenAIEmbedding("text-embedding-ada-002", api_key="k", base_url="http://127.0.0.1:9").dimension == 1536
    with pytest.raises(ConfigurationError, match="ada-002 always returns 1536"):
        OpenAIEmbedding("text-embedding-ada-002", api_key="k", dimension=256)


def test_unknown_model_dimension_is_probed_once_and_cached(api_factory):
    api = api_factory()
    emb = OpenAIEmbedding(model="my-local-model", api_key="k", base_url=api.url)
    assert emb.dimension == DIM
    assert emb.dimension == DIM
    assert len(api.requests) == 1
    assert "dimensions" not in api.requests[0]["body"]


def test_batches_are_split_at_the_provider_limit(api_factory):
    api = api_factory()
    emb = SiliconflowEmbedding(api_key="sf-key", base_url=api.url)
    texts = [f"text number {i}" for i in range(70)]
    vectors = emb.embed_documents(texts)
    assert [len(r["body"]["input"]) for r in api.requests] == [32, 32, 6]  # SiliconFlow's 32-input cap
    assert vectors == [vector_for(t) for t in texts]
    assert [r["body"]["model"] for r in api.requests] == ["BAAI/bge-m3"] * 3
    assert emb.dimension == 1024  # known: no probe


def test_batch_size_config_is_capped_by_the_limit(api_factory):
    api = api_factory()
    emb = OpenAIEmbedding(model="m", api_key="k", base_url=api.url, batch_size=2)
    emb.embed_documents(["a", "b", "c", "d", "e"])
    assert [len(r["body"]["input"]) for r in api.requests] == [2, 2, 1]
    assert SiliconflowEmbedding(api_key="k", batch_size=5000).batch_size == 32


def test_character_budget_splits_batches():
    texts = ["x" * 40, "y" * 40, "z" * 40, "w"]
    assert [len(b) for b in batched(texts, max_items=10, max_chars=100)] == [2, 2]
    assert [len(b) for b in batched(["x" * 500, "y"], max_items=10, max_chars=100)] == [
        1,
        1,
    ]  # too long alone: still sent


def test_429_with_retry_after_then_500_are_retried(api_factory):
    api = api_factory()
    api.failures = [(429, {"Retry-After": "1"}), (500, {})]
    emb = OpenAIEmbedding(model="m", api_key="k", base_url=api.url, **FAST)
    vector = emb.embed_query("hello")
    assert vector == vector_for("hello")
    assert len(api.requests) == 3 and emb.retries == 2
    waited = api.requests[1]["at"] - api.requests[0]["at"]
    assert waited >= 0.95  # Retry-After: 1 was honoured
    assert api.requests[2]["at"] - api.requests[1]["at"] < 0.9  # the 500 used the short backoff


def test_retries_give_up_with_one_line_error(api_factory):
    api = api_factory()
    api.failures = [(503, {})] * 3
    emb = OpenAIEmbedding(model="m", api_key="k", base_url=api.url, max_retries=2, **FAST)
    with pytest.raises(EmbeddingError) as excinfo:
        emb.embed_documents(["a"])
    message = str(excinfo.value)
    assert "\n" not in message
    assert message.startswith(
        f"OpenAIEmbedding failed (model m at {api.url}): 503 Service Unavailable after 3 attempts"
    )
    assert len(api.requests) == 3


def test_client_errors_are_not_retried_and_show_the_server_message(api_factory):
    api = api_factory(lambda path, body, headers: (401, {"error": {"message": "Incorrect API key provided"}}))
    emb = OpenAIEmbedding(model="m", api_key="bad", base_url=api.url, **FAST)
    with pytest.raises(EmbeddingError, match="401 Unauthorized: Incorrect API key provided. Check the API key"):
        emb.embed_query("x")
    assert len(api.requests) == 1


def test_a_too_long_retry_after_is_not_waited_for(api_factory):
    api = api_factory()
    api.failures = [(429, {"Retry-After": "3600"})]
    emb = OpenAIEmbedding(model="m", api_key="k", base_url=api.url, max_retry_after=5, **FAST)
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="retry after 3600 s"):
        emb.embed_query("x")
    assert time.monotonic() - started < 2


def test_unreachable_server_is_a_connection_error(monkeypatch):
    emb = OpenAIEmbedding(model="m", api_key="k", base_url="http://127.0.0.1:9", max_retries=1, **FAST)
    with pytest.raises(EmbeddingError, match=r"cannot connect .*Check base_url"):
        emb.embed_query("x")


@pytest.mark.parametrize(
    "cls, env_var",
    [
        (OpenAIEmbedding, "OPENAI_API_KEY"),
        (VoyageEmbedding, "VOYAGE_API_KEY"),
        (GeminiEmbedding, "GEMINI_API_KEY"),
        (JinaEmbedding, "JINA_API_KEY"),
        (SiliconflowEmbedding, "SILICONFLOW_API_KEY"),
        (NovitaEmbedding, "NOVITA_API_KEY"),
    ],
)
def test_missing_key_is_one_line_naming_the_env_var(cls, env_var):
    with pytest.raises(MissingAPIKeyError) as excinfo:
        cls()
    message = str(excinfo.value)
    assert message == f"No API key for {cls.__name__}: set {env_var} or provide_settings.embedding.config.api_key."


def test_key_is_read_from_the_environment(api_factory, monkeypatch):
    api = api_factory()
    monkeypatch.setenv("NOVITA_API_KEY", "nv-key")
    emb = NovitaEmbedding(base_url=api.url)
    emb.embed_query("q")
    assert api.requests[0]["headers"]["authorization"] == "Bearer nv-key"
    assert api.requests[0]["body"]["model"] == "baai/bge-m3"
    assert NovitaEmbedding().base_url == "https://api.novita.ai/v3/openai"
    assert SiliconflowEmbedding(api_key="k").base_url == "https://api.siliconflow.cn/v1"


def test_azure_deployment_url_and_api_key_header(api_factory, monkeypatch):
    api = api_factory()
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    emb = OpenAIEmbedding(
        model="text-embedding-3-large", azure_endpoint=api.url + "/", deployment="emb-prod", api_version="2024-06-01"
    )
    emb.embed_documents(["one", "two"])
    [request] = api.requests
    assert request["path"] == "/openai/deployments/emb-prod/embeddings?api-version=2024-06-01"
    assert request["headers"]["api-key"] == "az-key"
    assert "authorization" not in request["headers"]
    assert emb.dimension == 3072


def test_query_and_document_prefixes(api_factory):
    api = api_factory()
    emb = OpenAIEmbedding(model="m", api_key="k", base_url=api.url, query_prefix="query: ", document_prefix="passage: ")
    emb.embed_query("cats")
    emb.embed_documents(["dogs"])
    assert [r["body"]["input"] for r in api.requests] == [["query: cats"], ["passage: dogs"]]


def test_empty_text_is_sent_as_a_space(api_factory):
    api = api_factory()
    OpenAIEmbedding(model="m", api_key="k", base_url=api.url).embed_documents(["", "x"])
    assert api.requests[0]["body"]["input"] == [" ", "x"]


def test_wrong_number_of_vectors_is_an_error(api_factory):
    api = api_factory(lambda path, body, headers: (200, {"data": [{"index": 0, "embedding": [1.0]}]}))
    with pytest.raises(EmbeddingError, match="expected 2 embeddings"):
        OpenAIEmbedding(model="m", api_key="k", base_url=api.url).embed_documents(["a", "b"])


# ---------------------------------------------------------------------- Jina, Voyage, Gemini, Ollama


def test_jina_sends_retrieval_tasks(api_factory):
    api = api_factory()
    emb = JinaEmbedding(api_key="jina-key", base_url=api.url, dimension=DIM)
    assert emb.embed_query("what?") == vector_for("what?")
    assert emb.embed_documents(["answer"]) == [vector_for("answer")]
    query, doc = (r["body"] for r in api.requests)
    assert query["task"] == "retrieval.query" and doc["task"] == "retrieval.passage"
    assert query["model"] == "jina-embeddings-v3" and query["dimensions"] == DIM
    assert api.requests[0]["path"] == "/embeddings"
    assert api.requests[0]["headers"]["authorization"] == "Bearer jina-key"
    assert JinaEmbedding(api_key="k").dimension == 1024


def test_jina_v2_models_get_no_task(api_factory):
    api = api_factory()
    JinaEmbedding("jina-embeddings-v2-base-en", api_key="k", base_url=api.url).embed_query("x")
    assert "task" not in api.requests[0]["body"]


def test_voyage_input_types_and_key(api_factory, monkeypatch):
    api = api_factory()
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-voyage")
    emb = VoyageEmbedding(model="voyage-3-large", base_url=api.url + "/v1")
    emb.embed_query("find me")
    emb.embed_documents(["doc one", "doc two"])
    query, docs = api.requests
    assert query["path"] == docs["path"] == "/v1/embeddings"
    assert query["body"]["input_type"] == "query" and docs["body"]["input_type"] == "document"
    assert docs["body"]["input"] == ["doc one", "doc two"] and docs["body"]["model"] == "voyage-3-large"
    assert query["headers"]["authorization"] == "Bearer pa-voyage"
    assert emb.dimension == 1024
    assert VoyageEmbedding(api_key="k").base_url == "https://api.voyageai.com/v1"


def test_voyage_splits_by_input_count(api_factory):
    api = api_factory()
    emb = VoyageEmbedding(api_key="k", base_url=api.url)
    emb.embed_documents(["t"] * 1001)
    assert [len(r["body"]["input"]) for r in api.requests] == [1000, 1]


def gemini_reply(path: str, body: dict, headers: dict) -> tuple[int, Any]:
    return 200, {"embeddings": [{"values": vector_for(r["content"]["parts"][0]["text"])} for r in body["requests"]]}


def test_gemini_batch_embed_contents(api_factory, monkeypatch):
    api = api_factory(gemini_reply)
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")
    emb = GeminiEmbedding(base_url=api.url + "/v1beta", dimension=768)
    texts = [f"t{i}" for i in range(150)]
    vectors = emb.embed_documents(texts)
    assert vectors == [vector_for(t) for t in texts]
    first, second = api.requests
    assert first["path"] == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert first["headers"]["x-goog-api-key"] == "g-key"
    assert (len(first["body"]["requests"]), len(second["body"]["requests"])) == (100, 50)  # 100 per call
    request = first["body"]["requests"][0]
    assert request == {
        "model": "models/gemini-embedding-001",
        "content": {"parts": [{"text": "t0"}]},
        "taskType": "RETRIEVAL_DOCUMENT",
        "outputDimensionality": 768,
    }
    emb.embed_query("q")
    assert api.requests[-1]["body"]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert emb.dimension == 768
    assert GeminiEmbedding(api_key="k").dimension == 3072
    assert GeminiEmbedding("models/text-embedding-004", api_key="k").model == "text-embedding-004"


def test_gemini_falls_back_to_google_api_key(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert GeminiEmbedding().api_key == "google-key"


def ollama_reply(path: str, body: dict, headers: dict) -> tuple[int, Any]:
    if path != "/api/embed":
        return 404, {"error": "not found"}
    if body["model"] == "missing":
        return 404, {"error": 'model "missing" not found, try pulling it first'}
    return 200, {"model": body["model"], "embeddings": [vector_for(t) for t in body["input"]]}


def test_ollama_api_embed_without_key(api_factory, monkeypatch):
    api = api_factory(ollama_reply)
    monkeypatch.setenv("OLLAMA_HOST", api.url.removeprefix("http://"))  # OLLAMA_HOST is usually host:port
    emb = OllamaEmbedding(model="nomic-embed-text")
    assert emb.embed_documents(["x", "yy"]) == [vector_for("x"), vector_for("yy")]
    [request] = api.requests
    assert request["path"] == "/api/embed"
    assert request["body"] == {"model": "nomic-embed-text", "input": ["x", "yy"], "truncate": False}
    assert "authorization" not in request["headers"]
    assert emb.dimension == 768
    assert OllamaEmbedding(base_url=api.url + "/v1").base_url == api.url  # the OpenAI-compatible URL works too
    assert OllamaEmbedding(model="all-minilm:latest").dimension == 384


def test_ollama_missing_model_names_the_server_message(api_factory):
    api = api_factory(ollama_reply)
    with pytest.raises(EmbeddingError, match=r"404 Not Found: model \"missing\" not found, try pulling it first"):
        OllamaEmbedding(model="missing", base_url=api.url).embed_query("x")


def test_ollama_text_past_the_context_is_embedded_in_halves_not_cut_off(api_factory):
    """Ollama refuses a text past the model's context (truncate: false): every character still
    reaches a vector, through the halves it is cut into, and the other texts keep their own."""
    context = 40

    def reply(path: str, body: dict, headers: dict) -> tuple[int, Any]:
        if any(len(text) > context for text in body["input"]):
            return 400, {"error": "the input length exceeds the context length"}
        return ollama_reply(path, body, headers)

    api = api_factory(reply)
    emb = OllamaEmbedding(model="all-minilm", base_url=api.url)
    long_text = " ".join(f"word{n}" for n in range(25))  # 149 characters: halved twice or three times
    short, pooled = emb.embed_documents(["short text", long_text])
    assert short == vector_for("short text")
    inputs = [request["body"]["input"] for request in api.requests]
    pieces = [texts[0] for texts in inputs if all(len(t) <= context for t in texts) and texts != ["short text"]]
    assert "".join(pieces) == long_text  # every character embedded, none twice
    assert 4 <= len(pieces) <= 8 and all(len(piece) <= context for piece in pieces)
    assert abs(sum(x * x for x in pooled) - 1.0) < 1e-6  # the halves' mean, normalised like Ollama's vectors


def test_remote_models_declare_their_documented_windows():
    """A remote model declares the tokens it reads where its documentation says: the default
    chunk fits it (and stays at 1,500 characters when the window is wider); an unknown model declares none."""
    from deepsearcher.embedding.base import UNDECLARED_CHUNK_SIZE, chunk_size_for_window

    openai = OpenAIEmbedding(api_key="k")
    assert openai.window_tokens == 8191 and openai.default_chunk_size() == UNDECLARED_CHUNK_SIZE
    assert GeminiEmbedding(api_key="k").window_tokens == 2048
    assert VoyageEmbedding(api_key="k").window_tokens == 32000
    assert JinaEmbedding(api_key="k").window_tokens == 8192
    small = SiliconflowEmbedding(model="BAAI/bge-large-en-v1.5", api_key="k")
    assert small.window_tokens == 512
    assert small.default_chunk_size() == UNDECLARED_CHUNK_SIZE < chunk_size_for_window(512)
    assert OpenAIEmbedding(model="my-own-deployment", api_key="k").window_tokens is None


# ---------------------------------------------------------------------- Bedrock through boto3


def bedrock_reply(path: str, body: dict, headers: dict) -> tuple[int, Any]:
    model = unquote(path.split("/")[2])
    if model.startswith("cohere."):
        return 200, {"embeddings": [vector_for(t) for t in body["texts"]], "id": "x", "texts": body["texts"]}
    return 200, {"embedding": vector_for(body["inputText"]), "inputTextTokenCount": 1}


def bedrock(api: FakeAPI, **kwargs: Any):
    from deepsearcher.embedding.bedrock_embedding import BedrockEmbedding

    return BedrockEmbedding(
        endpoint_url=api.url,
        region_name="eu-west-1",
        aws_access_key_id="AKIDTESTKEY",
        aws_secret_access_key="secret",
        **kwargs,
    )


def test_bedrock_titan_signs_requests_and_sends_one_text_per_call(api_factory):
    api = api_factory(bedrock_reply)
    emb = bedrock(api, dimension=256, **FAST)
    texts = ["first", "second", "third"]
    assert emb.embed_documents(texts) == [vector_for(t) for t in texts]
    assert len(api.requests) == 3
    paths = {urlsplit(r["path"]).path for r in api.requests}
    assert {unquote(p) for p in paths} == {"/model/amazon.titan-embed-text-v2:0/invoke"}
    assert sorted(r["body"]["inputText"] for r in api.requests) == sorted(texts)
    assert all(r["body"]["dimensions"] == 256 for r in api.requests)
    auth = api.requests[0]["headers"]["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDTESTKEY/") and "/eu-west-1/bedrock/aws4_request" in auth
    assert emb.dimension == 256 and emb.model_name == "amazon.titan-embed-text-v2:0"


def test_bedrock_cohere_batches_and_input_types(api_factory):
    api = api_factory(bedrock_reply)
    emb = bedrock(api, model="cohere.embed-english-v3")
    texts = [f"passage {i}" for i in range(100)]
    assert emb.embed_documents(texts) == [vector_for(t) for t in texts]
    assert [len(r["body"]["texts"]) for r in api.requests] == [96, 4]
    assert api.requests[0]["body"]["input_type"] == "search_document"
    emb.embed_query("question")
    assert api.requests[-1]["body"]["input_type"] == "search_query"
    assert emb.dimension == 1024


def test_bedrock_throttling_is_retried(api_factory):
    api = api_factory(bedrock_reply)
    api.failures = [(429, {"x-amzn-ErrorType": "ThrottlingException", "Retry-After": "0.3"}), (500, {})]
    emb = bedrock(api, **FAST)
    assert emb.embed_query("hi") == vector_for("hi")
    assert len(api.requests) == 3 and emb.retries == 2
    assert api.requests[1]["at"] - api.requests[0]["at"] >= 0.28


def test_bedrock_without_credentials_is_one_line(monkeypatch, tmp_path):
    from deepsearcher.embedding.bedrock_embedding import BedrockEmbedding

    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(MissingAPIKeyError, match=r"^No AWS credentials for BedrockEmbedding: set AWS_ACCESS_KEY_ID"):
        BedrockEmbedding()


# ---------------------------------------------------------------------- optional extras


def hide_module(monkeypatch, name: str) -> None:
    """Make `import name` fail as it does when the package is not installed."""
    for module in list(sys.modules):
        if module == name or module.startswith(name + "."):
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize(
    "provider, module, extra",
    [
        ("LiteLLMEmbedding", "litellm", "litellm"),
        ("FastEmbedEmbedding", "fastembed", "fastembed"),
        ("BedrockEmbedding", "boto3", "bedrock"),
    ],
)
def test_missing_extra_is_one_line_naming_it(monkeypatch, provider, module, extra):
    """Without the package, constructing the provider says which extra to install."""
    hide_module(monkeypatch, module)
    with pytest.raises(MissingDependencyError) as excinfo:
        registry.get(provider)(api_key="k") if provider == "LiteLLMEmbedding" else registry.get(provider)()
    message = str(excinfo.value)
    assert "\n" not in message
    assert f"pip install 'deepsearcher[{extra}]'" in message and f"'{module}'" in message


def test_fastembed_model_that_cannot_be_fetched(monkeypatch, tmp_path):
    """FastEmbed is not installed in CI (it pins huggingface-hub<2): then this asserts the
    missing-extra error. Where it is installed, a model absent from an empty cache (and no
    network) must give a one-line error naming the model and the cache directory."""
    from deepsearcher.config.optional import is_installed
    from deepsearcher.embedding.fastembed_embedding import FastEmbedEmbedding

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if not is_installed("fastembed"):
        with pytest.raises(MissingDependencyError, match=r"deepsearcher\[fastembed\]"):
            FastEmbedEmbedding()
        return
    with pytest.raises(EmbeddingError) as excinfo:
        FastEmbedEmbedding("BAAI/bge-small-en-v1.5", cache_dir=str(tmp_path), local_files_only=True)
    message = str(excinfo.value)
    assert "\n" not in message
    assert "BAAI/bge-small-en-v1.5" in message and str(tmp_path) in message and "network" in message


class StandInLiteLLM(types.ModuleType):
    """Stands in for the `litellm` package (not installed in CI): records calls, fails on cue."""

    class RateLimitError(Exception):
        status_code = 429

        def __init__(self) -> None:
            super().__init__("rate limited")
            self.response = types.SimpleNamespace(headers={"retry-after": "0.2"})

    def __init__(self) -> None:
        super().__init__("litellm")
        self.calls: list[dict[str, Any]] = []
        self.fail_next = 0

    def embedding(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        if self.fail_next:
            self.fail_next -= 1
            raise self.RateLimitError()
        return {"data": [{"embedding": vector_for(t), "index": i} for i, t in enumerate(kwargs["input"])]}


def test_litellm_adapter_batches_retries_and_passes_options(monkeypatch):
    """LiteLLM itself is an optional extra not installed in CI, so its module is stood in for;
    what is tested is our adapter: batching, our retry policy on its 429, and the arguments."""
    fake = StandInLiteLLM()
    monkeypatch.setitem(sys.modules, "litellm", fake)
    emb = registry.get("LiteLLMEmbedding")(
        model="voyage/voyage-3", api_key="k", base_url="http://proxy:4000", batch_size=2, **FAST
    )
    assert emb.dimension == 1024  # known from the model table, without a call
    fake.fail_next = 1
    texts = ["a", "bb", "ccc"]
    assert emb.embed_documents(texts) == [vector_for(t) for t in texts]
    assert [call["input"] for call in fake.calls] == [["a", "bb"], ["a", "bb"], ["ccc"]]  # first batch retried
    assert emb.retries == 1
    call = fake.calls[0]
    assert (call["model"], call["api_key"], call["api_base"], call["num_retries"]) == (
        "voyage/voyage-3",
        "k",
        "http://proxy:4000",
        0,
    )


# ---------------------------------------------------------------------- registry


def test_every_provider_is_registered_with_its_metadata():
    names = set(registry.names())
    assert {
        "OpenAIEmbedding",
        "OllamaEmbedding",
        "VoyageEmbedding",
        "GeminiEmbedding",
        "BedrockEmbedding",
        "SiliconflowEmbedding",
        "NovitaEmbedding",
        "JinaEmbedding",
        "LiteLLMEmbedding",
        "FastEmbedEmbedding",
        "SentenceTransformerEmbedding",
    } <= names
    assert registry.info("VoyageEmbedding").env_var == "VOYAGE_API_KEY"
    assert (
        registry.info("BedrockEmbedding").requires == ("boto3",)
        and registry.info("BedrockEmbedding").extra == "bedrock"
    )
    assert registry.info("FastEmbedEmbedding").requires == ("fastembed",)
    assert registry.info("OllamaEmbedding").env_var is None


def test_embedding_works_from_inside_a_running_event_loop(api_factory):
    """Sync embedding calls made from async code (an agent, a web handler) must not deadlock."""
    import asyncio

    api = api_factory()
    emb = OpenAIEmbedding(model="m", api_key="k", base_url=api.url)

    async def inside() -> list[float]:
        return emb.embed_query("loop")

    assert asyncio.run(inside()) == vector_for("loop")
