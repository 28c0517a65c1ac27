"""DeepSearcher's REST calls against our server (uvicorn on 127.0.0.1, Milvus Lite, MiniLM,
the scripted LLM server): POST /set-provider-config/, /load-files/, /load-website/ and
GET /query/ with DeepSearcher's request and response shapes, and who may switch providers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from helpers import make_docs
from website_server import LocalServer, Reply

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread
from deepsearcher.testing import scripted_llm_fixture

llm = scripted_llm_fixture(name="llm", scope="module", fallback="NO")
ADMIN = "admin-key-0123456789"
READER = "reader-key-0123456789"


def start(base: Path, llm: Any, server_section: dict[str, Any]) -> ServerThread:
    settings = {
        "provide_settings": {
            "llm": llm.llm_config(retry_base_delay=0.01, max_retries=0),
            "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
            "web_crawler": {
                "provider": "HttpCrawler",
                "config": {"allow_private_network": True, "respect_robots": False},
            },
        },
        "server": {"allowed_roots": [str(base)], "data_dir": str(base / "data"), **server_section},
    }
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return ServerThread(create_app(Configuration(path)))


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, llm) -> Any:
    base = tmp_path_factory.mktemp("compat-rest")
    make_docs(base / "docs")
    keys = [{"key": ADMIN, "name": "admin"}, {"key": READER, "name": "reader", "collections": ["science"]}]
    with start(base, llm, {"api_keys": keys}) as running:
        running.base = base
        yield running


def client(server: Any, key: str | None) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=120)


def test_set_provider_config_needs_the_admin_key(keyed, llm) -> None:
    body = {
        "feature": "llm",
        "provider": "OpenAI",
        "config": {"model": "switched-model", "api_key": "sk-secret-value", "base_url": llm.base_url},
    }
    with client(keyed, None) as anonymous, client(keyed, READER) as reader, client(keyed, ADMIN) as admin:
        assert anonymous.post("/set-provider-config/", json=body).status_code == 401
        refused = reader.post("/set-provider-config/", json=body)
        assert refused.status_code == 403 and "admin key" in refused.text

        switched = admin.post("/set-provider-config/", json=body)
        assert switched.status_code == 200, switched.text
        assert switched.json() == {
            "message": "Provider config set successfully",
            "provider": "OpenAI",
            "config": {"model": "switched-model", "api_key": "***", "base_url": llm.base_url},
        }
        assert "sk-secret-value" not in switched.text

        # a query needs something to search (with nothing loaded it is a 409, not an answer from nothing)
        loaded = admin.post("/load-files/", json={"paths": [str(keyed.base / "docs")], "collection_name": "switched"})
        assert loaded.status_code == 200, loaded.text
        llm.on("You route a question", "1")
        llm.on("Break the question below", '["anything"]')
        answer = admin.get("/query/", params={"original_query": "What is sourdough?", "max_iter": 1})
        assert answer.status_code == 200, answer.text
        assert set(answer.json()) == {"result", "consume_token"}
        assert llm.requests[-1].model == "switched-model"  # the new provider answered

        unknown = admin.post("/set-provider-config/", json={"feature": "llm", "provider": "NoSuchLLM", "config": {}})
        assert unknown.status_code == 400 and "Unknown llm provider 'NoSuchLLM'" in unknown.text
        no_key = admin.post("/set-provider-config/", json={"feature": "llm", "provider": "DeepSeek", "config": {}})
        assert no_key.status_code == 400 and "DEEPSEEK_API_KEY" in no_key.text
        still = admin.get("/query/", params={"original_query": "What is sourdough?", "max_iter": 1})
        assert still.status_code == 200 and llm.requests[-1].model == "switched-model"  # the previous settings stayed


def test_upstream_load_and_query_shapes(keyed, llm) -> None:
    page = "<html><head><title>Lichen</title></head><body><p>Lichens pair a fungus with an alga.</p></body></html>"
    with client(keyed, ADMIN) as admin:
        files = admin.post(
            "/load-files/",
            json={
                "paths": [str(keyed.base / "docs")],
                "collection_name": "upstream_docs",
                "collection_description": "Loaded the DeepSearcher way",
                "batch_size": 256,
            },
        )
        assert files.status_code == 200 and files.json()["message"].startswith("Files loaded successfully"), files.text
        with LocalServer({"/lichen": Reply(page)}) as site:
            website = admin.post(
                "/load-website/", json={"urls": [site.url("/lichen")], "collection_name": "upstream_web"}
            )
        assert website.status_code == 200 and website.json()["message"].startswith("Website loaded successfully")
        listed = {c["name"]: c for c in admin.get("/v1/collections").json()}
        assert listed["upstream_docs"]["description"] == "Loaded the DeepSearcher way"


def test_without_keys_a_loopback_server_may_switch(tmp_path: Path, llm) -> None:
    with start(tmp_path, llm, {}) as running:
        with client(running, None) as local:
            body = {
                "feature": "llm",
                "provider": "OpenAI",
                "config": {"model": "loopback-model", "api_key": "x", "base_url": llm.base_url},
            }
            switched = local.post("/set-provider-config/", json=body)
            assert switched.status_code == 200, switched.text
            state = running.app.state.deepsearcher
            assert state.config.get_provider_config("llm")["config"]["model"] == "loopback-model"
            assert state.current().llm.model == "loopback-model"  # the app's own components switched
            # a password inside a URL is not echoed back either
            with_password = llm.base_url.replace("http://", "http://bob:hunter2@") + "?api_key=abc"
            body["config"] = {**body["config"], "base_url": with_password}
            echoed = local.post("/set-provider-config/", json=body)
            assert echoed.status_code == 200, echoed.text
            assert "hunter2" not in echoed.text and "abc" not in echoed.text
            assert echoed.json()["config"]["base_url"].startswith("http://bob:***@")
