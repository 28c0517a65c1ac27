"""A keyless loopback server refuses other sites' pages: foreign Host names (DNS rebinding) and
state-changing requests from other origins (CSRF), while its own page and plain programs work.

A real server on loopback; the browser's headers are sent by hand (test_web_page drives the real
page in Chromium, which must keep working).
"""

from __future__ import annotations

import httpx
import pytest
import yaml

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("origins")
    (base / "doc.txt").write_text("Grace Hopper built the first compiler.", encoding="utf-8")
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}}},
        "server": {
            "allowed_roots": [str(base)],
            "data_dir": str(base / "data"),
            "allowed_hosts": ["docs.internal"],
            "allowed_origins": ["http://tools.internal:3000"],
        },
    }
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    with ServerThread(create_app(Configuration(path))) as server:
        server.base = base
        yield server


def test_a_foreign_host_name_is_refused_everywhere(running) -> None:
    with httpx.Client(base_url=running.url, timeout=60) as client:
        rebound = {"Host": f"rebind.attacker.example:{running.port}"}
        for method, path, body in (
            ("GET", "/v1/collections", None),
            ("POST", "/set-provider-config/", {"feature": "web_crawler", "provider": "HttpCrawler", "config": {}}),
            ("POST", "/v1/load", {"inputs": [str(running.base)]}),
            ("DELETE", "/v1/collections/deepsearcher", None),
            ("GET", "/", None),
        ):
            response = client.request(method, path, json=body, headers=rebound)
            assert response.status_code == 403, (path, response.text)
            assert "server.allowed_hosts" in response.json()["error"]
        for host in ("localhost", "127.0.0.1", "[::1]", "docs.internal"):
            assert client.get("/health", headers={"Host": f"{host}:{running.port}"}).status_code == 200


def test_state_changing_requests_from_another_origin_are_refused(running) -> None:
    with httpx.Client(base_url=running.url, timeout=60) as client:
        evil = client.post(
            "/v1/documents",
            files={"files": ("note.txt", b"planted by a web page")},
            data={"collection": "planted"},
            headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        )
        assert evil.status_code == 403 and "server.allowed_origins" in evil.json()["error"]
        no_origin = client.post(
            "/v1/load", json={"inputs": [str(running.base)]}, headers={"Sec-Fetch-Site": "cross-site"}
        )
        assert no_origin.status_code == 403
        sandboxed = client.post("/v1/load", json={"inputs": [str(running.base)]}, headers={"Origin": "null"})
        assert sandboxed.status_code == 403
        assert client.get("/v1/collections", headers={"Origin": "http://evil.example"}).status_code == 200  # reads
        assert not [row for row in client.get("/v1/collections").json() if row["name"] == "planted"]

        own = client.post(
            "/v1/load",
            json={"inputs": [str(running.base / "doc.txt")], "collection": "own"},
            headers={"Origin": running.url, "Sec-Fetch-Site": "same-origin"},
        )
        assert own.status_code == 202, own.text  # the server's own page
        allowed = client.post(
            "/v1/load",
            json={"inputs": [str(running.base / "doc.txt")], "collection": "tools"},
            headers={"Origin": "http://tools.internal:3000"},
        )
        assert allowed.status_code == 202, allowed.text
        program = client.post("/v1/load", json={"inputs": [str(running.base / "doc.txt")], "collection": "cli"})
        assert program.status_code == 202  # curl, an SDK: no browser headers
