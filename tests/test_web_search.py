"""The web beside private documents (issue 32): providers, the web source, privacy, degradation, cache.

Everything is real on loopback: a SearXNG- and Tavily-compatible stand-in search API that also
serves the fixture pages (deepsearcher/testing/web_search_api.py), the scripted OpenAI-compatible
LLM server, Milvus Lite in a temp dir and the bundled MiniLM model. The crawler's private-network
allowance is switched on only through the explicit `web.allow_private_network` setting.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.testing.web_search_api import WebSearchStandIn
from deepsearcher.types.errors import MissingAPIKeyError
from deepsearcher.web_search.base import WebSearchError
from deepsearcher.web_search.searxng import SearXNG
from deepsearcher.web_search.tavily_search import Tavily

server = scripted_llm_fixture(name="server", fallback="NO")
runner = CliRunner()

MARKER = "ZEBRAQUILL-4471"
PRIVATE_MEMO = (
    "Project Falcon internal memo. Codename " + MARKER + ". Project Falcon will launch its first satellite "
    "from the Kourou spaceport in French Guiana, as the board decided in its closed meeting."
)
PAGES = {
    "moon": (
        "Distance to the Moon",
        "The Moon orbits the Earth at an average distance of 384,400 kilometres. Light takes about 1.3 "
        "seconds to travel from the Moon to the Earth, and the distance changes over each orbit.",
    ),
    "kourou": (
        "Kourou spaceport",
        "The Guiana Space Centre near Kourou lies close to the equator, which gives launches an extra push "
        "from the rotation of the Earth. European rockets have launched from there since 1968.",
    ),
}
QUESTION = "Where does Project Falcon launch, and how far is the Moon from Earth?"


def recording(log: list[str], reply: str):
    """A scripted reply that also keeps each prompt it answered."""

    def answer(request) -> str:
        log.append(request.last_user_message)
        return reply

    return answer


def cite_everything(request) -> str:
    numbers = sorted({int(n) for n in re.findall(r"^\[(\d+)\] \(", request.last_user_message, re.M)})
    return "Falcon launches from Kourou and the Moon is 384,400 km away " + "".join(f"[{n}]" for n in numbers) + "."


@pytest.fixture
def api():
    with WebSearchStandIn(PAGES) as stand_in:
        yield stand_in


@pytest.fixture
def web_config(tmp_path: Path, milvus_uri: str, server, api) -> Path:
    settings = {
        "provide_settings": {
            "llm": server.llm_config(retry_base_delay=0.01),
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
            "web_search": {"provider": "SearXNG", "config": {"base_url": api.base_url, "call_timeout": 3}},
        },
        "web": {"allow_private_network": True, "audit_log": str(tmp_path / "audit.jsonl")},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    docs = tmp_path / "private"
    docs.mkdir()
    (docs / "falcon_memo.md").write_text(f"# Falcon memo\n\n{PRIVATE_MEMO}\n", encoding="utf-8")
    loaded = runner.invoke(app, ["load", str(docs), "--collection-name", "memos", "-c", str(path)])
    assert loaded.exit_code == 0, loaded.output
    return path


def ask(config: Path, *extra: str) -> dict:
    result = runner.invoke(app, ["query", QUESTION, "--agent", "naive", "-c", str(config), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_web_query_cites_a_web_page_and_a_private_file_and_never_sends_private_text(
    server, api, web_config: Path, tmp_path: Path
) -> None:
    server.on("Answer the question using only the numbered sources", cite_everything)
    data = ask(web_config, "--web")
    cited = [source for source in data["sources"] if source["cited"]]
    web = [source for source in cited if source["reference"].startswith("http")]
    private = [source for source in cited if source["reference"].endswith("falcon_memo.md")]
    assert web and private
    assert web[0]["title"] in {title for title, _ in PAGES.values()} and web[0]["fetched_at"].endswith("+00:00")
    searches = [step for step in data["steps"] if step["kind"] == "web_search"]
    assert [step["query"] for step in searches] == [QUESTION] == api.queries  # shown, and all that was sent
    assert all(MARKER not in query and "Kourou spaceport in French" not in query for query in api.queries)
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [entry["query"] for entry in audit] == [QUESTION]
    assert "Web search failed" not in data["answer"]
    # the fetched pages are cached apart from the user's collections, and reused by the next question
    listed = runner.invoke(app, ["collections", "list", "-c", str(web_config), "--json"])
    assert "deepsearcher_web_cache" not in listed.stdout and "memos" in listed.stdout
    hits = len(api.page_hits)
    again = ask(web_config, "--web")
    assert len(api.page_hits) == hits and any(s["reference"].startswith("http") for s in again["sources"])
    pages = runner.invoke(app, ["web-cache", "-c", str(web_config), "--json"])
    assert pages.exit_code == 0, pages.output
    assert {page["url"] for page in json.loads(pages.stdout)} >= {api.page_url("moon")}
    cleared = runner.invoke(app, ["web-cache", "--clear", "-c", str(web_config)])
    assert cleared.exit_code == 0 and "Removed" in cleared.output
    assert json.loads(runner.invoke(app, ["web-cache", "-c", str(web_config), "--json"]).stdout) == []


def test_with_the_search_api_stopped_the_answer_is_private_only_and_says_so(server, api, web_config: Path) -> None:
    server.on("Answer the question using only the numbered sources", cite_everything)
    api.close()
    data = ask(web_config, "--web")
    assert data["sources"] and all(not s["reference"].startswith("http") for s in data["sources"])
    assert data["answer"].splitlines()[-1].startswith("Web search failed (")
    failed = [step for step in data["steps"] if step["kind"] == "web_search"]
    assert failed and "cannot connect" in failed[0]["error"]


@pytest.mark.parametrize(
    ("mode", "expected"), [("error", "500 Internal Server Error after 2 attempts"), ("garbage", "not JSON")]
)
def test_searxng_faults_become_one_error_naming_the_cause(mode: str, expected: str) -> None:
    with WebSearchStandIn(PAGES, mode=mode) as api:
        search = SearXNG(base_url=api.base_url, max_retries=1, call_timeout=3)
        with pytest.raises(WebSearchError, match=expected) as caught:
            asyncio.run(search.asearch("moon distance"))
    assert "SearXNG" in str(caught.value)
    assert len(api.queries) == (1 if mode == "garbage" else 2)  # a 500 is retried once, garbage is not


def test_searxng_and_tavily_results_are_normalised(api) -> None:
    searxng = asyncio.run(SearXNG(base_url=api.base_url).asearch("distance to the Moon", 1))
    tavily = asyncio.run(Tavily(api_key="tvly-test", base_url=api.base_url).asearch("distance to the Moon", 1))
    for results in (searxng, tavily):
        assert [(r.title, r.url) for r in results] == [("Distance to the Moon", api.page_url("moon"))]
        assert results[0].snippet.startswith("The Moon orbits")
    assert api.queries == ["distance to the Moon"] * 2


@pytest.mark.parametrize(
    ("name", "variable"),
    [
        ("SearXNG", "SEARXNG_URL"),
        ("Tavily", "TAVILY_API_KEY"),
        ("Brave", "BRAVE_API_KEY"),
        ("Serper", "SERPER_API_KEY"),
    ],
)
def test_a_provider_without_its_setting_names_the_variable(
    name: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deepsearcher.web_search import registry

    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(MissingAPIKeyError, match=rf"web search provider {name}: set {variable} or provide_settings"):
        registry.get(name)()


def test_brave_and_serper_replies_are_normalised_the_same_way() -> None:
    """Their real APIs cannot be reached from the test machine: their documented reply shapes are read here."""
    from deepsearcher.web_search.brave import Brave
    from deepsearcher.web_search.serper import Serper

    brave = Brave(api_key="k")._normalise(
        {"web": {"results": [{"title": "Moon", "url": "https://a.org/moon", "description": "384,400 km", "age": "2d"}]}}
    )
    serper = Serper(api_key="k")._normalise(
        {"organic": [{"title": "Moon", "link": "https://a.org/moon", "snippet": "384,400 km", "date": "2d"}]}
    )
    assert brave == serper and brave[0].to_dict() == {
        "title": "Moon",
        "url": "https://a.org/moon",
        "snippet": "384,400 km",
        "date": "2d",
    }


def sse_kinds_and_result(response) -> tuple[list[str], dict]:
    steps, result, name = [], {}, None
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and name in ("step", "result"):
            data = json.loads(line.split(":", 1)[1])
            if name == "step":
                steps.append(data["kind"])
            else:
                result = data
    return steps, result


def test_rest_web_auto_lets_the_collection_router_pick_the_web(server, api, web_config: Path) -> None:
    import httpx

    from deepsearcher.config import Configuration
    from deepsearcher.server.app import create_app
    from deepsearcher.server.runner import ServerThread

    settings = yaml.safe_load(web_config.read_text())
    admin, reader = "admin-key-0123456789", "reader-key-0123456789"
    settings["server"] = {"api_keys": [{"key": admin}, {"key": reader, "collections": ["memos"]}]}
    web_config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    routed: list[str] = []
    server.on("You choose which document collections", recording(routed, '["memos", "web"]'))
    server.on("Answer the question using only the numbered sources", cite_everything)
    body = {"question": QUESTION, "agent": "naive", "web": "auto"}
    with (
        ServerThread(create_app(Configuration(web_config))) as running,
        httpx.Client(base_url=running.url, headers={"Authorization": f"Bearer {admin}"}, timeout=60) as client,
    ):
        with client.stream("POST", "/v1/query", json=body, headers={"Accept": "text/event-stream"}) as r:
            assert r.status_code == 200
            steps, result = sse_kinds_and_result(r)
        off = client.post("/v1/query", json={**body, "web": "off"}).json()
        cached = client.get("/v1/web-cache").json()
        refused = client.delete("/v1/web-cache", headers={"Authorization": f"Bearer {reader}"})
        cleared = client.delete("/v1/web-cache").json()
    assert {page["url"] for page in cached} >= {api.page_url("moon")} and cleared == {"removed": len(cached)}
    assert refused.status_code == 403 and "may not clear the web cache" in refused.text
    assert "- web: the public web" in routed[0] and "deepsearcher_web_cache" not in routed[0]
    assert steps[:3] == ["collections", "web_search", "web_fetch"]
    assert any(source["reference"].startswith("http") for source in result["sources"])
    assert len(routed) == 1 and "web_search" not in [step["kind"] for step in off["steps"]]  # off: no router call
    assert api.queries == [QUESTION]


def test_query_from_private_is_an_explicit_opt_in(server, api, web_config: Path) -> None:
    settings = yaml.safe_load(web_config.read_text())
    settings["web"]["query_from_private"] = True
    web_config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    asked: list[str] = []
    server.on("Write one web search query", recording(asked, "Falcon launch site Kourou distance Moon"))
    server.on("Answer the question using only the numbered sources", cite_everything)
    data = ask(web_config, "--web")
    assert MARKER in asked[0]  # the user allowed private passages to shape the query
    assert api.queries == ["Falcon launch site Kourou distance Moon"]
    assert [s["query"] for s in data["steps"] if s["kind"] == "web_search"] == api.queries


def test_pages_on_loopback_are_refused_without_the_explicit_setting(server, api, web_config: Path) -> None:
    settings = yaml.safe_load(web_config.read_text())
    del settings["web"]["allow_private_network"]
    web_config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    server.on("Answer the question using only the numbered sources", cite_everything)
    data = ask(web_config, "--web")
    fetch = next(step for step in data["steps"] if step["kind"] == "web_fetch")
    assert fetch["fetched"] == 0 and all(
        "private" in reason or "loopback" in reason for reason in fetch["failed"].values()
    )
    assert api.page_hits == [] and all(not s["reference"].startswith("http") for s in data["sources"])
    assert "Web search failed (no result page could be fetched)" in data["answer"]


def test_deep_search_judges_web_chunks_with_the_same_judge(server, api, web_config: Path) -> None:
    judged: list[str] = []

    def judge(request) -> str:
        judged.append(request.last_user_message)
        return "YES" if "384,400" in request.last_user_message or MARKER in request.last_user_message else "NO"

    server.on("Break the question below", '["Project Falcon launch site", "distance to the Moon"]')
    server.on("Does the passage below contain", judge)
    server.on("Answer the question using only the numbered sources", cite_everything)
    result = runner.invoke(
        app, ["query", QUESTION, "--agent", "deep", "--max-iter", "1", "--web", "-c", str(web_config), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert any("384,400" in prompt for prompt in judged) and any("Guiana" in prompt for prompt in judged)
    references = {source["reference"] for source in data["sources"]}
    assert api.page_url("moon") in references and api.page_url("kourou") not in references  # judged NO
    assert any(reference.endswith("falcon_memo.md") for reference in references)


def test_expired_pages_are_removed_before_use(milvus_uri: str) -> None:
    from deepsearcher.agent.web_cache import WebCache
    from deepsearcher.embedding import MiniLMEmbedding
    from deepsearcher.types import Document
    from deepsearcher.vector_db import Milvus

    store = Milvus(uri=milvus_uri)
    try:
        cache = WebCache(MiniLMEmbedding(), store, ttl_hours=1)
        page = Document("The Moon is 384,400 km away.", {"reference": "https://example.org/moon", "title": "Moon"})
        assert cache.add([page], fetched=1_000_000.0) == 1
        assert cache.fresh(now=1_000_000.0 + 3500) == {"https://example.org/moon"}
        [listed] = cache.pages(now=1_000_000.0 + 1800)
        assert listed.expires_in_hours == 0.5 and listed.fetched_at == "1970-01-12T13:46:40+00:00"
        assert cache.fresh(now=1_000_000.0 + 3700) == set() and cache.pages() == []  # expired: deleted
    finally:
        store.close()


@pytest.mark.parametrize("provider", ["SearXNG", "Tavily"])
def test_429_is_retried_and_its_retry_after_read(provider: str) -> None:
    def build(base_url: str):
        if provider == "Tavily":
            return Tavily(api_key="tvly-test", base_url=base_url, max_retries=2, call_timeout=5)
        return SearXNG(base_url=base_url, max_retries=2, call_timeout=5)

    with WebSearchStandIn(PAGES, mode="rate_limit") as api:
        with pytest.raises(WebSearchError, match=rf"{provider}.*429 Too Many Requests after 3 attempts"):
            asyncio.run(build(api.base_url).asearch("moon"))
    assert api.queries == ["moon"] * 3
    with WebSearchStandIn(PAGES, mode="rate_limit", retry_after="600") as api:  # longer than the search may wait
        with pytest.raises(WebSearchError, match=r"asked to retry after 600 s"):
            asyncio.run(build(api.base_url).asearch("moon"))
    assert api.queries == ["moon"]


def test_mcp_deep_search_takes_web_and_returns_the_fetch_time(server, api, web_config: Path) -> None:
    from deepsearcher.app.components import build_components
    from deepsearcher.config import Configuration
    from deepsearcher.mcp_server import DeepSearcherTools

    server.on("Answer the question using only the numbered sources", cite_everything)
    components = build_components(Configuration(web_config))
    try:
        answer = DeepSearcherTools(components).deep_search(QUESTION, agent="naive", web="always")
    finally:
        components.close()
    web = [source for source in answer["sources"] if source["reference"].startswith("http")]
    assert web and all(source["fetched_at"] for source in web) and api.queries == [QUESTION]
