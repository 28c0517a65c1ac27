"""`deepsearcher load URL…` / load_from_website: crawl the fixture site into the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import make_docs, write_config
from typer.testing import CliRunner
from website_server import Website, make_pdf

from deepsearcher.cli.main import app

runner = CliRunner()
CRAWLER = (
    '  web_crawler:\n    provider: "HttpCrawler"\n    config:\n      allow_private_network: true\n      timeout: 2\n'
)


@pytest.fixture
def site():
    with Website(make_pdf()) as website:
        yield website


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    return write_config(tmp_path / "config.yaml", milvus_uri, extra=CRAWLER)


def load(*args: str):
    return runner.invoke(app, ["load", *args, "--json"])


def test_urls_and_files_load_together_and_reload_is_idempotent(
    tmp_path: Path, site: Website, config_file: Path
) -> None:
    docs = make_docs(tmp_path / "docs")
    first = load(
        site.url("/article"),
        site.url("/report.pdf"),
        str(docs / "bread.txt"),
        "--collection-name",
        "web",
        "-c",
        str(config_file),
    )
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert sorted(summary["loaded"]) == sorted([site.url("/article"), site.url("/report.pdf"), str(docs / "bread.txt")])
    assert summary["failed"] == []

    found = runner.invoke(
        app, ["search", "first vent community Galapagos", "--collection", "web", "-c", str(config_file), "--json"]
    )
    hit = json.loads(found.stdout)["results"][0]
    assert hit["reference"] == site.url("/article") and "1977" in hit["text"]
    assert "vent" in hit["metadata"]["title"].lower()  # the page title travels with every chunk
    assert "Copyright 2024" not in hit["text"]  # boilerplate dropped

    again = json.loads(
        load(site.url("/article"), site.url("/report.pdf"), "--collection-name", "web", "-c", str(config_file)).stdout
    )
    assert len(again["skipped_unchanged"]) == 2 and again["embeddings_computed"] == 0


def test_depth_and_page_limits_and_failures_by_url(site: Website, config_file: Path) -> None:
    result = load(
        site.url("/"),
        site.url("/missing"),
        "--max-depth",
        "1",
        "--max-pages",
        "6",
        "--collection-name",
        "web",
        "-c",
        str(config_file),
    )
    assert result.exit_code == 1  # a start URL failed
    summary = json.loads(result.stdout)
    loaded = summary["loaded"]
    assert site.url("/") in loaded and len(loaded) <= 6
    assert site.url("/c") not in loaded  # depth 2
    failed = {failure["source"]: failure for failure in summary["failed"]}
    assert failed[site.url("/missing")]["fatal"] is True and "404" in failed[site.url("/missing")]["reason"]
    skipped = {item["source"]: item["reason"] for item in summary["skipped"]}
    assert any("robots" in reason for url, reason in skipped.items() if url.endswith("/private/secret"))


def test_a_broken_link_is_named_but_does_not_fail_the_load(site: Website, config_file: Path) -> None:
    site.server.routes["/with-broken-link"] = site.server.routes["/b"].__class__(
        "<html><head><title>Links</title></head><body><main><p>"
        + "Reef ecology notes. " * 20
        + '</p><a href="/error">broken</a></main></body></html>'
    )
    result = load(site.url("/with-broken-link"), "--max-depth", "1", "--collection-name", "web", "-c", str(config_file))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["loaded"] == [site.url("/with-broken-link")]
    assert summary["failed"] == [
        {"source": site.url("/error"), "reason": summary["failed"][0]["reason"], "fatal": False, "limit": None}
    ]
    assert "500" in summary["failed"][0]["reason"]


def test_private_addresses_are_refused_unless_allowed(tmp_path: Path, site: Website, milvus_uri: str) -> None:
    strict = write_config(tmp_path / "strict.yaml", milvus_uri)
    result = load(site.url("/article"), "-c", str(strict))
    assert result.exit_code == 1
    failure = json.loads(result.stdout)["failed"][0]
    assert failure["source"].startswith("http://127.0.0.1")
    assert "allow_private_network" in failure["reason"]  # the reason names the setting that would allow it
    assert site.hits("/article") == 0
