"""`deepsearcher load --refresh` fetches the collection's stored web pages again with a
conditional GET (ETag / Last-Modified) against a real HTTP server on 127.0.0.1: a page the
server says is not modified (304) is skipped and kept, a changed one is replaced."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
from helpers import components_for, write_config
from typer.testing import CliRunner
from website_server import LocalServer, Reply, Request

from deepsearcher.cli.main import app
from deepsearcher.config import Configuration
from deepsearcher.mcp_server import DeepSearcherTools
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread

runner = CliRunner()
CRAWLER = (
    '  web_crawler:\n    provider: "HttpCrawler"\n    config:\n      allow_private_network: true\n'
    "      respect_robots: false\n      timeout: 2\n"
)
PAGE = "<html><head><title>{title}</title></head><body><main><p>{text}</p></main></body></html>"


class Versioned:
    """A page with an ETag: answers 304 to a matching If-None-Match, else the current version."""

    def __init__(self, etag: str, text: str) -> None:
        self.etag, self.text = etag, text

    def __call__(self, request: Request) -> Reply:
        if request.headers.get("if-none-match") == self.etag:
            return Reply(b"", status=304, content_type=None, headers={"ETag": self.etag})
        body = PAGE.format(title="Lanterns", text=self.text)
        return Reply(body, headers={"ETag": self.etag, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"})


def load(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["load", *args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_refresh_uses_conditional_get(tmp_path: Path, milvus_uri: str) -> None:
    config = write_config(tmp_path / "config.yaml", milvus_uri, extra=CRAWLER)
    still = Versioned('"v1"', "The quartz lantern of the old lighthouse was lit every night for a century.")
    edited = Versioned('"a1"', "The brass orrery in the north tower turns once a year, at midwinter.")
    with LocalServer({"/still": still, "/edited": edited}) as server:
        urls = [server.url("/still"), server.url("/edited")]
        code, first = load(*urls, "--collection", "web", "-c", str(config))
        assert code == 0 and sorted(first["loaded"]) == sorted(urls)
        assert not any("if-none-match" in request.headers for request in server.requests)

        edited.etag, edited.text = '"a2"', "The brass orrery was moved to the museum and no longer turns."
        server.requests.clear()
        code, refreshed = load("--refresh", "--collection", "web", "-c", str(config))
        assert code == 0, refreshed
        conditional = {request.path: request.headers.get("if-none-match") for request in server.requests}
        assert conditional == {"/still": '"v1"', "/edited": '"a1"'}
        outcomes = {item["source"]: (item["outcome"], item["reason"]) for item in refreshed["sources"]}
        assert outcomes[urls[0]][0] == "skipped" and "HTTP 304" in outcomes[urls[0]][1]
        assert outcomes[urls[1]][0] == "replaced"

        found = runner.invoke(
            app, ["search", "brass orrery museum", "--collection", "web", "-c", str(config), "--json"]
        )
        results = json.loads(found.stdout)["results"]
        assert any("museum" in hit["text"] for hit in results)
        assert any(
            hit["reference"] == urls[0]
            for hit in json.loads(
                runner.invoke(
                    app, ["search", "quartz lantern lighthouse", "--collection", "web", "-c", str(config), "--json"]
                ).stdout
            )["results"]
        )  # the 304 page is still stored

        # The same refresh from the REST API (a job) and from MCP: `refresh: true`, no inputs.
        edited.etag, edited.text = '"a3"', "The brass orrery now stands in the museum's east hall."
        server.requests.clear()
        with ServerThread(create_app(Configuration(config))) as api, httpx.Client(base_url=api.url) as client:
            accepted = client.post("/v1/load", json={"collection": "web", "refresh": True})
            assert accepted.status_code == 202, accepted.text
            job = wait_for(client, accepted.json()["job_id"])
            assert job["status"] == "succeeded", job
            nothing = client.post("/v1/load", json={"collection": "web"})  # no inputs, no refresh
            assert nothing.status_code == 400 and "No input given" in nothing.text, nothing.text
        assert {request.path: request.headers.get("if-none-match") for request in server.requests} == {
            "/still": '"v1"',
            "/edited": '"a2"',
        }

        edited.etag, edited.text = '"a4"', "The brass orrery was sold at auction."
        server.requests.clear()
        tools = DeepSearcherTools(components_for(config))
        result = tools.load([], collection="web", refresh=True)
        assert result["ok"] and result["replaced"] == [urls[1]] and result["loaded"] == [], result  # /still: 304, kept
        assert {request.path: request.headers.get("if-none-match") for request in server.requests} == {
            "/still": '"v1"',
            "/edited": '"a3"',
        }


def wait_for(client: httpx.Client, job_id: str) -> dict:
    deadline = time.monotonic() + 60
    while (job := client.get(f"/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, "the refresh job did not finish"
        time.sleep(0.05)
    return job
