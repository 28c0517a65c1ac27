"""A server without API keys, LLM or allowed roots: open on loopback, 503 for queries, 403 for paths."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("open-server")
    settings = {
        "provide_settings": {
            "llm": {"provider": "OpenAI", "config": {"model": "gpt-4o-mini"}},
            "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
        },
        "server": {"data_dir": str(base / "data")},
    }
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("OPENAI_API_KEY", raising=False)
        with (
            ServerThread(create_app(Configuration(path))) as server,
            httpx.Client(base_url=server.url, timeout=120) as http,
        ):
            yield http


def test_without_keys_no_header_is_needed(client: httpx.Client) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["auth"] is False and health["llm"] is False
    assert client.get("/v1/collections").json() == []
    assert client.get("/v1/jobs").json() == []


def test_queries_answer_503_naming_how_to_configure_an_llm(client: httpx.Client) -> None:
    for response in (
        client.post("/v1/query", json={"question": "anything?"}),
        client.get("/query/", params={"original_query": "anything?"}),
    ):
        assert response.status_code == 503
        error = response.json()["error"]
        assert "OPENAI_API_KEY" in error and "provide_settings.llm" in error


def test_server_paths_are_refused_without_allowed_roots(client: httpx.Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("text", encoding="utf-8")
    for response in (
        client.post("/v1/load", json={"inputs": [str(tmp_path / "a.txt")]}),
        client.post("/load-files/", json={"paths": [str(tmp_path / "a.txt")]}),
    ):
        assert response.status_code == 403 and "server.allowed_roots" in response.json()["error"]


def test_uploads_still_work(client: httpx.Client) -> None:
    response = client.post("/v1/documents", files=[("files", ("note.md", b"# Note\n\nBees communicate by dancing.\n"))])
    assert response.status_code == 202
    job_id = response.json()["job_id"]
    for _ in range(600):
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            break
        time.sleep(0.1)
    assert job["status"] == "succeeded" and job["collection"] == "deepsearcher"
    assert job["results"]["loaded"] == ["upload://deepsearcher/note.md"]
