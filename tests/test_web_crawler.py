"""Web crawlers against real HTTP servers on 127.0.0.1 (tests/website_server.py).

HttpCrawler crawls a small fixture site; FireCrawl and Jina adapters talk to local servers
speaking those services' APIs. Nothing here reaches beyond this machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
import time
from datetime import datetime, timezone
from urllib.parse import urlsplit

import pytest
from website_server import (
    ARTICLE_MAIN,
    ARTICLE_SECOND,
    PDF_TEXT,
    LocalServer,
    Reply,
    Request,
    Website,
    make_pdf,
    page,
    text,
)

from deepsearcher.config import Configuration
from deepsearcher.loader.web_crawler import registry
from deepsearcher.loader.web_crawler._errors import MissingAPIKeyError
from deepsearcher.loader.web_crawler._safety import AddressPolicy, address_kind, guard_transport
from deepsearcher.loader.web_crawler._urls import URLPattern, normalize_url, site_of, url_key
from deepsearcher.loader.web_crawler.base import CrawlFailure, CrawlReport, CrawlSkip
from deepsearcher.loader.web_crawler.crawl4ai_crawler import Crawl4AICrawler
from deepsearcher.loader.web_crawler.firecrawl_crawler import FireCrawlCrawler
from deepsearcher.loader.web_crawler.http_crawler import DEFAULT_USER_AGENT, HttpCrawler
from deepsearcher.loader.web_crawler.jina_crawler import JinaCrawler
from deepsearcher.types import ConfigurationError, Document, MissingDependencyError, content_hash

MB = 1024 * 1024


@pytest.fixture(scope="module")
def pdf_bytes() -> bytes:
    return make_pdf()


@pytest.fixture
def site(pdf_bytes: bytes):
    with Website(pdf_bytes) as website:
        yield website


def crawler(**options) -> HttpCrawler:
    """The tests' site is on 127.0.0.1, so private networks are allowed unless a test says otherwise."""
    options.setdefault("allow_private_network", True)
    return HttpCrawler(**options)


def paths(report: CrawlReport) -> set[str]:
    return {urlsplit(d.reference).path for d in report.documents}


def page_hits(site: Website) -> dict[str, int]:
    counts = site.server.hit_counts()
    counts.pop("/robots.txt", None)
    return dict(counts)


# ---------------------------------------------------------------------------------------------
# Depth, limits, scope


@pytest.mark.parametrize(
    "depth, expected",
    [
        (0, {"/"}),
        (1, {"/", "/a", "/b", "/article", "/docs/guide", "/new-page"}),
        (2, {"/", "/a", "/b", "/article", "/docs/guide", "/new-page", "/c", "/docs/api"}),
    ],
)
def test_max_depth_bounds_the_pages_followed(site: Website, depth: int, expected: set[str]) -> None:
    report = crawler().crawl(site.url("/"), max_depth=depth)
    assert paths(report) == expected
    assert report.failures == []
    assert {d.metadata["depth"] for d in report.documents} == set(range(depth + 1))
    assert site.hits("/d") == 0
    assert report.stats.documents == len(expected)


def test_max_pages_caps_the_pages_fetched(site: Website) -> None:
    report = crawler(max_pages=3).crawl(site.url("/"), max_depth=3)
    assert len(report.documents) == 3
    assert sum(page_hits(site).values()) == 3
    assert any(s.reason == "not fetched: max_pages (3) reached" for s in report.skipped)
    assert report.failures == []


def test_start_urls_past_max_pages_are_failures_not_silently_dropped(site: Website) -> None:
    report = crawler(max_pages=1).crawl([site.url("/a"), site.url("/b")])
    assert paths(report) == {"/a"}
    assert report.failure_for(site.url("/b")) == "not fetched: max_pages (1) reached"
    assert site.hits("/b") == 0


def test_each_page_is_fetched_once_through_loops_fragments_and_slashes(site: Website) -> None:
    report = crawler().crawl([site.url("/"), site.url("/#intro")], max_depth=5)
    hits = site.server.hit_counts()
    assert hits["/robots.txt"] == 1
    assert {path: n for path, n in hits.items() if n != 1} == {}  # A ↔ B loop, "/a#top", "/b/"
    assert hits["/b/"] == 0 and hits["/d"] == 1
    references = [d.reference for d in report.documents]
    assert len(references) == len(set(references))


def test_same_site_only_by_default(site: Website) -> None:
    other = f"{site.other.base}/page"
    report = crawler().crawl(site.url("/"), max_depth=1)
    assert CrawlSkip(other, "off-site link (same_site is on)") in report.skipped
    assert site.other.hits("/page") == 0

    report = crawler(same_site=False).crawl(site.url("/"), max_depth=1)
    assert other in {d.reference for d in report.documents}
    assert site.other.hits("/page") == 1


def test_include_patterns_glob(site: Website) -> None:
    report = crawler(include_patterns=["/docs/*"]).crawl(site.url("/"), max_depth=2)
    assert paths(report) == {"/", "/docs/guide", "/docs/api"}  # the start URL is always crawled
    assert CrawlSkip(site.url("/a"), "matches none of include_patterns") in report.skipped
    assert site.hits("/a") == 0


def test_exclude_patterns_regex(site: Website) -> None:
    report = crawler().crawl(site.url("/"), max_depth=1, exclude_patterns=[r"/(a|b)$"])
    assert paths(report) == {"/", "/article", "/docs/guide", "/new-page"}
    assert CrawlSkip(site.url("/b"), "excluded by pattern '/(a|b)$'") in report.skipped
    assert site.hits("/a") == 0 and site.hits("/b") == 0


def test_binary_links_are_not_fetched(site: Website) -> None:
    report = crawler().crawl(site.url("/"), max_depth=1)
    assert CrawlSkip(site.url("/logo.png"), "not a page (.png file)") in report.skipped
    assert site.hits("/logo.png") == 0


def test_robots_txt_is_respected(site: Website) -> None:
    report = crawler().crawl(site.url("/"), max_depth=1)
    assert CrawlSkip(site.url("/private/secret"), "disallowed by robots.txt") in report.skipped
    report = crawler().crawl(site.url("/private/secret"))
    assert report.failure_for(site.url("/private/secret")) == "disallowed by robots.txt"
    assert site.hits("/private/secret") == 0

    report = crawler(respect_robots=False).crawl(site.url("/private/secret"))
    assert paths(report) == {"/private/secret"}


def test_sitemap_start_url_yields_its_pages(site: Website) -> None:
    report = crawler().crawl(site.url("/sitemap.xml"))
    assert paths(report) == {"/a", "/b", "/docs/guide"}
    assert report.failures == []
    assert all(
        d.metadata["depth"] == 0 and d.metadata["linked_from"] == site.url("/sitemap.xml") for d in report.documents
    )
    assert site.hits("/c") == 0  # depth 0: the sitemap's pages only


def test_sitemap_index_is_followed(site: Website) -> None:
    report = crawler().crawl(site.url("/sitemap_index.xml"))
    assert paths(report) == {"/a", "/b", "/docs/guide", "/c"}
    assert report.failures == []


def test_same_content_under_two_urls_is_one_document(site: Website) -> None:
    report = crawler().crawl([site.url("/a"), site.url("/mirror/a")])
    assert len(report.documents) == 1
    (skip,) = report.skipped
    assert skip.reason.startswith("same content as ")


def test_connection_pool_is_bounded() -> None:
    routes = {f"/w{i}": Reply(page(f"W{i}", text(f"wave {i}")), delay=0.2) for i in range(6)}
    with LocalServer(routes) as server:
        report = crawler(max_connections=2, respect_robots=False).crawl([server.url(p) for p in routes])
        assert len(report.documents) == 6
        assert server.max_in_flight == 2


# ---------------------------------------------------------------------------------------------
# Extraction and metadata


def test_extraction_keeps_main_text_and_headings_and_drops_boilerplate(site: Website) -> None:
    (document,) = crawler().crawl_url(site.url("/article"))
    body = document.page_content
    assert ARTICLE_MAIN in body and ARTICLE_SECOND in body
    assert "# Hydrothermal vents" in body and "## Life around vents" in body
    for boilerplate in ("cookies", "All rights reserved", "Contact us", "Privacy policy"):
        assert boilerplate not in body
    meta = document.metadata
    assert meta["reference"] == site.url("/article")
    assert "vents" in meta["title"].lower()
    assert meta["content_type"] == "text/html" and meta["status_code"] == 200 and meta["depth"] == 0
    assert "redirected_from" not in meta
    fetched = datetime.fromisoformat(meta["fetched_at"])
    assert fetched.utcoffset() == timezone.utc.utcoffset(None)
    assert abs((datetime.now(timezone.utc) - fetched).total_seconds()) < 60
    assert document.content_hash == content_hash(body)


def test_redirect_recorded_with_final_url_as_reference(site: Website) -> None:
    (document,) = crawler().crawl_url(site.url("/old-page"))
    assert document.reference == site.url("/new-page")
    assert document.metadata["redirected_from"] == [site.url("/old-page")]
    (document,) = crawler().crawl_url(site.url("/hop1"))
    assert document.metadata["redirected_from"] == [site.url("/hop1"), site.url("/hop2")]
    report = crawler(max_redirects=1).crawl(site.url("/hop1"))
    assert report.failure_for(site.url("/hop1")).startswith("too many redirects (more than 1")


def test_pdf_and_plain_text_go_through_the_file_loaders(site: Website) -> None:
    report = crawler().crawl([site.url("/report.pdf"), site.url("/notes.txt")])
    assert report.failures == []
    by_path = {urlsplit(d.reference).path: d for d in report.documents}
    pdf = by_path["/report.pdf"]
    assert PDF_TEXT in pdf.page_content
    assert pdf.metadata["content_type"] == "application/pdf"
    assert pdf.metadata["page"] == 1 and pdf.metadata["title"] == "Abyssal Plains Report"
    assert pdf.reference == site.url("/report.pdf")
    notes = by_path["/notes.txt"]
    assert "sediment cores at four stations" in notes.page_content
    assert notes.metadata["content_type"] == "text/plain"
    assert notes.reference == site.url("/notes.txt")
    assert all("deepsearcher-crawl-" not in str(v) for d in report.documents for v in d.metadata.values())


def test_user_agent_names_deepsearcher(site: Website) -> None:
    crawler().crawl(site.url("/a"))
    agents = {r.headers["user-agent"] for r in site.server.requests}
    assert agents == {DEFAULT_USER_AGENT}
    assert DEFAULT_USER_AGENT.startswith("DeepSearcher/0.2 (research crawler")


# ---------------------------------------------------------------------------------------------
# Failures: every one named by URL with a reason


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_every_failure_is_reported_by_url_with_a_reason(site: Website) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/"
    expected = {
        site.url("/missing"): "HTTP 404 Not Found",
        site.url("/error"): "HTTP 500 Internal Server Error",
        site.url("/huge"): "larger than 1 MB cap",
        site.url("/huge-stream"): "larger than 1 MB cap",
        site.url("/image"): "content type image/png",
        site.url("/archive"): "content type application/zip",
        site.url("/empty-page"): "no main text found",
        site.url("/feed.xml"): "not <urlset> or <sitemapindex>",
        site.url("/loop1"): "redirect loop",
        site.url("/to-ftp"): "scheme 'ftp' refused",
        "http://no-such-host.invalid/": "DNS lookup failed for no-such-host.invalid",
        refused: "connection refused",
    }
    report = crawler(max_bytes=MB, timeout=10).crawl(list(expected))
    assert report.documents == []
    assert len(report.failures) == len(expected) == report.stats.failures
    for url, reason in expected.items():
        assert reason in (report.failure_for(url) or ""), (url, report.failure_for(url))
    assert site.hits("/huge-stream") == 1


def test_slow_page_times_out(site: Website) -> None:
    started = time.monotonic()
    report = crawler(timeout=0.5).crawl(site.url("/slow"))
    assert report.failure_for(site.url("/slow")) == "timed out after 0.5 s"
    assert time.monotonic() - started < 2.5


def test_private_addresses_are_refused_by_default(site: Website) -> None:
    report = HttpCrawler().crawl([site.url("/"), f"http://localhost:{site.server.port}/a"])
    reason = report.failure_for(site.url("/"))
    assert reason.startswith("refused: 127.0.0.1 is a loopback address")
    assert "allow_private_network" in reason
    assert report.failure_for(f"http://localhost:{site.server.port}/a").startswith(
        "refused: localhost resolves to 127.0.0.1, which is a loopback address"
    )
    assert site.server.requests == []  # not even robots.txt
    assert report.documents == []


@pytest.mark.parametrize("allow", [False, True])
def test_cloud_metadata_refused_without_any_request(allow: bool) -> None:
    urls = [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://metadata.google.internal/",
        "http://[2002:a9fe:a9fe::]/latest/meta-data/",
    ]
    started = time.monotonic()
    report = HttpCrawler(allow_private_network=allow, timeout=5).crawl(urls)
    assert time.monotonic() - started < 1
    assert report.stats.requests == 0
    for url in urls:
        assert "cloud metadata" in (report.failure_for(url) or ""), report.failures


def test_redirect_hops_are_checked_too(site: Website) -> None:
    report = crawler().crawl(site.url("/to-metadata"))
    assert report.failure_for(site.url("/to-metadata")) == (
        "redirected to http://169.254.169.254/latest/meta-data/: "
        "refused: 169.254.169.254 is a cloud metadata address (never crawled)"
    )


def test_non_http_schemes_are_refused() -> None:
    urls = ["ftp://example.org/file.txt", "file:///etc/passwd", "javascript:alert(1)", "example.org/no-scheme"]
    report = HttpCrawler().crawl(urls)
    assert report.stats.requests == 0
    for url in urls:
        assert "refused: only http and https URLs are crawled" in report.failure_for(url)


def test_crawl_urls_logs_each_failure_and_keeps_the_report(site: Website, caplog: pytest.LogCaptureFixture) -> None:
    web = crawler()
    with caplog.at_level(logging.WARNING, logger="deepsearcher.loader.web_crawler.base"):
        documents = web.crawl_urls([site.url("/a"), site.url("/missing"), site.url("/error")])
    assert [d.reference for d in documents] == [site.url("/a")]
    logged = [r.getMessage() for r in caplog.records]
    assert f"Could not crawl {site.url('/missing')}: HTTP 404 Not Found" in logged
    assert f"Could not crawl {site.url('/error')}: HTTP 500 Internal Server Error" in logged
    assert web.last_report is not None and len(web.last_report.failures) == 2


# ---------------------------------------------------------------------------------------------
# Sync, async and streaming entry points


async def test_sync_crawl_works_inside_a_running_event_loop(site: Website) -> None:
    documents = crawler().crawl_url(site.url("/a"))
    assert [d.reference for d in documents] == [site.url("/a")]
    report = await crawler().acrawl([site.url("/b")])
    assert paths(report) == {"/b"}


def test_stream_yields_documents_and_failures_as_they_come(site: Website) -> None:
    web = crawler()
    items = list(web.stream([site.url("/a"), site.url("/missing")]))
    assert {type(i) for i in items} == {Document, CrawlFailure}
    assert CrawlFailure(site.url("/missing"), "HTTP 404 Not Found") in items
    assert web.last_report.stats.documents == 1 and web.last_report.documents == []


def test_stream_stops_early_when_the_consumer_stops() -> None:
    chain = {f"/p{i}": Reply(page(f"P{i}", text(f"depth {i}"), [f"/p{i + 1}"]), delay=0.1) for i in range(10)}
    with LocalServer(chain) as server:
        stream = crawler(max_connections=1, respect_robots=False).stream(server.url("/p0"), max_depth=9)
        first = next(item for item in stream if isinstance(item, Document))
        stream.close()
        served = sum(server.hits(f"/p{i}") for i in range(10))
        assert server.hits("/p9") == 0  # close did not wait for the crawl to finish (ten pages, 0.1 s each)
        time.sleep(0.5)  # a crawl still running would fetch about five more pages meanwhile
        assert sum(server.hits(f"/p{i}") for i in range(10)) <= served + 1  # at most the one in flight
        assert first.reference == server.url("/p0")


async def test_the_documents_of_one_page_stream_together() -> None:
    from deepsearcher.loader.web_crawler.base import CrawlSink

    queue: asyncio.Queue = asyncio.Queue(maxsize=1)
    sink = CrawlSink(CrawlReport(), queue)
    pdf_pages = [Document(f"pdf page {i}", {"reference": "http://x.org/r.pdf"}) for i in range(3)]
    html = [Document("html", {"reference": "http://x.org/a"})]
    tasks = [asyncio.ensure_future(sink.documents(pdf_pages)), asyncio.ensure_future(sink.documents(html))]
    received = [(await queue.get()).reference for _ in range(4)]
    await asyncio.gather(*tasks)
    assert received in (
        ["http://x.org/r.pdf"] * 3 + ["http://x.org/a"],
        ["http://x.org/a"] + ["http://x.org/r.pdf"] * 3,
    )
    assert sink.stats.documents == 4


# ---------------------------------------------------------------------------------------------
# Configuration, URL rules, address rules


def test_http_crawler_is_the_default_and_validates_options() -> None:
    assert Configuration().provide_settings["web_crawler"]["provider"] == "HttpCrawler"
    assert registry.get("HttpCrawler") is HttpCrawler
    assert set(registry.names()) >= {"HttpCrawler", "FireCrawlCrawler", "JinaCrawler", "Crawl4AICrawler"}
    with pytest.raises(ConfigurationError, match="max_depth must be an integer >= 0"):
        HttpCrawler(max_depth=-1)
    with pytest.raises(ConfigurationError, match="Unknown HttpCrawler option.*colour.*allowed: max_depth"):
        HttpCrawler(colour="blue")
    with pytest.raises(ConfigurationError, match="allow_private_network must be true or false"):
        HttpCrawler(allow_private_network="yes")
    with pytest.raises(ConfigurationError, match="Unknown HttpCrawler option"):
        HttpCrawler().crawl("http://example.org/", depht=1)


def test_url_normalisation() -> None:
    assert normalize_url("HTTP://Example.COM:80/a/./b/../c#frag") == "http://example.com/a/c"
    assert normalize_url("https://example.com:443") == "https://example.com/"
    assert normalize_url("https://example.com:8443/x?q=1") == "https://example.com:8443/x?q=1"
    assert url_key("http://example.com/docs/") == url_key("http://EXAMPLE.com/docs#top") == "http://example.com/docs"
    assert url_key("http://example.com/") == "http://example.com/"
    assert site_of("http://www.example.com/") == site_of("https://example.com/x") != site_of("http://example.com:8080/")


def test_patterns_glob_and_regex() -> None:
    assert URLPattern.parse("/docs/*").glob == "/docs/*"
    assert URLPattern.parse(r"/docs/.*\.html$").regex is not None
    assert URLPattern.parse("*.pdf").matches("http://x.org/a/b.pdf")
    assert not URLPattern.parse("/docs/*").matches("http://x.org/blog/1")
    assert URLPattern.parse("re:^https://").matches("https://x.org/")


@pytest.mark.parametrize(
    "address, kind",
    [
        ("127.0.0.1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("192.168.0.1", "a private address"),
        ("169.254.10.1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("::1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        # IPv6 forms that carry an IPv4 address, routed to it: 6to4, NAT64, IPv4-compatible, Teredo's client
        ("2002:a9fe:a9fe::", "a cloud metadata address"),
        ("2002:7f00:1::", "a loopback address"),
        ("64:ff9b::a9fe:a9fe", "a cloud metadata address"),
        ("64:ff9b::a00:1", "a private address"),
        ("::7f00:1", "a loopback address"),
        ("2001:0:4136:e378:8000:63bf:f5ff:fefe", "a private address"),
        ("2002:0808:0808::1", None),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("100.64.0.1", "a non-public address"),
        ("93.184.216.34", None),
    ],
)
def test_address_rules(address: str, kind: str | None) -> None:
    import ipaddress

    assert address_kind(ipaddress.ip_address(address)) == kind


async def test_the_guard_checks_addresses_at_connect_time(site: Website) -> None:
    """Without the crawler's own pre-check, the guarded transport still refuses at connect."""
    import httpx

    from deepsearcher.loader.web_crawler._errors import URLRefusedError

    url = f"http://localhost:{site.server.port}/a"
    transport = httpx.AsyncHTTPTransport()
    assert guard_transport(transport, AddressPolicy(allow_private_network=False)) is True
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(URLRefusedError, match="localhost resolves to 127.0.0.1, which is a loopback address"):
            await client.get(url)
    assert site.server.requests == []

    transport = httpx.AsyncHTTPTransport()
    guard_transport(transport, AddressPolicy(allow_private_network=True))
    async with httpx.AsyncClient(transport=transport) as client:
        assert (await client.get(url)).status_code == 200


# ---------------------------------------------------------------------------------------------
# FireCrawl adapter against a local server speaking its API


def firecrawl_server() -> LocalServer:
    state = {"polls": 0}

    def scrape(request: Request) -> Reply:
        body = request.json()
        url = body["url"]
        if "missing" in url:
            data = {"markdown": "", "metadata": {"sourceURL": url, "statusCode": 404, "error": "Not Found"}}
        else:
            data = {
                "markdown": "# Vents\n\nHot water on the seabed.",
                "metadata": {"title": "Vents", "sourceURL": url, "url": url, "statusCode": 200},
            }
        return Reply(json.dumps({"success": True, "data": data}), content_type="application/json")

    def crawl(request: Request) -> Reply:
        return Reply(
            json.dumps({"success": True, "id": "job-1", "url": "https://api.firecrawl.dev/v1/crawl/job-1"}),
            content_type="application/json",
        )

    def status(request: Request) -> Reply:
        state["polls"] += 1
        if "skip=2" in request.path:
            payload = {
                "status": "completed",
                "data": [
                    {
                        "markdown": "Page three.",
                        "metadata": {"title": "3", "sourceURL": "https://example.org/3", "statusCode": 200},
                    }
                ],
            }
        elif state["polls"] == 1:
            payload = {"status": "scraping", "total": 3, "completed": 1, "data": []}
        else:
            payload = {
                "status": "completed",
                "data": [
                    {
                        "markdown": "Page one.",
                        "metadata": {"title": "1", "sourceURL": "https://example.org/", "statusCode": 200},
                    },
                    {"markdown": "", "metadata": {"sourceURL": "https://example.org/gone", "statusCode": 410}},
                ],
                "next": "https://api.firecrawl.dev/v1/crawl/job-1?skip=2",
            }
        return Reply(json.dumps(payload), content_type="application/json")

    return LocalServer({"/v1/scrape": scrape, "/v1/crawl": crawl, "/v1/crawl/job-1": status})


def test_firecrawl_scrape_request_shape_and_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-test-key")
    with firecrawl_server() as api:
        report = FireCrawlCrawler(api_url=api.base).crawl(["https://example.org/vents", "https://example.org/missing"])
        request = next(r for r in api.requests if json.loads(r.body)["url"].endswith("/vents"))
    assert request.method == "POST" and request.path == "/v1/scrape"
    assert request.headers["authorization"] == "Bearer fc-test-key"
    assert json.loads(request.body)["formats"] == ["markdown"]
    (document,) = report.documents
    assert document.page_content == "# Vents\n\nHot water on the seabed."
    assert document.reference == "https://example.org/vents" and document.title == "Vents"
    assert report.failure_for("https://example.org/missing") == "HTTP 404 Not Found (via FireCrawl)"


def test_firecrawl_crawl_job_is_polled_and_paged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-test-key")
    with firecrawl_server() as api:
        report = FireCrawlCrawler(api_url=api.base, poll_interval=0.01).crawl(
            "https://example.org/", max_depth=2, max_pages=10, include_patterns=["/blog/.*"]
        )
        start = next(r for r in api.requests if r.path == "/v1/crawl")
    body = json.loads(start.body)
    assert start.method == "POST" and start.headers["authorization"] == "Bearer fc-test-key"
    assert body["url"] == "https://example.org/" and body["maxDepth"] == 2 and body["limit"] == 10
    assert body["includePaths"] == ["/blog/.*"] and body["scrapeOptions"]["formats"] == ["markdown"]
    assert [d.reference for d in report.documents] == ["https://example.org/", "https://example.org/3"]
    assert report.failure_for("https://example.org/gone") == "HTTP 410 (via FireCrawl)"
    assert [r.path for r in api.requests if r.method == "GET"] == ["/v1/crawl/job-1"] * 2 + ["/v1/crawl/job-1?skip=2"]


def test_firecrawl_api_errors_are_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-test-key")
    routes = {
        "/v1/scrape": Reply(
            json.dumps({"success": False, "error": "Insufficient credits"}), status=402, content_type="application/json"
        )
    }
    with LocalServer(routes) as api:
        report = FireCrawlCrawler(api_url=api.base).crawl(["https://example.org/", "ftp://example.org/x"])
        assert len(api.requests) == 1  # the ftp URL never reaches the service
    assert report.failure_for("https://example.org/") == "FireCrawl: HTTP 402 Payment Required: Insufficient credits"
    assert "scheme 'ftp' refused" in report.failure_for("ftp://example.org/x")


def test_firecrawl_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FIRECRAWL_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError) as error:
        FireCrawlCrawler()
    assert "FIRECRAWL_API_KEY" in str(error.value) and "\n" not in str(error.value)
    assert isinstance(error.value, ConfigurationError)


# ---------------------------------------------------------------------------------------------
# Jina Reader adapter against a local server speaking its API


def jina_server() -> LocalServer:
    def reader(request: Request) -> Reply:
        target = request.path[1:]
        if "missing" in target:
            data = {"title": "", "url": target, "content": "", "warning": "Target URL returned error 404: Not Found"}
            return Reply(json.dumps({"code": 200, "status": 20000, "data": data}), content_type="application/json")
        if "application/json" in request.headers.get("accept", ""):
            data = {
                "title": "Tides",
                "url": target,
                "content": "# Tides\n\nThe sea rises twice a day.",
                "description": "About tides",
            }
            return Reply(json.dumps({"code": 200, "status": 20000, "data": data}), content_type="application/json")
        return Reply(
            f"Title: Tides\n\nURL Source: {target}\n\nMarkdown Content:\n# Tides\n\nThe sea rises twice a day.\n",
            content_type="text/plain; charset=utf-8",
        )

    return LocalServer({"*": reader})


def test_jina_json_request_shape_and_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JINA_API_KEY", "jina-test-key")
    with jina_server() as api:
        report = JinaCrawler(base_url=api.base).crawl(["https://example.org/tides", "https://example.org/missing"])
        request = next(r for r in api.requests if r.path.endswith("/tides"))
    assert request.method == "GET" and request.path == "/https://example.org/tides"
    assert request.headers["authorization"] == "Bearer jina-test-key"
    assert request.headers["accept"] == "application/json"
    (document,) = report.documents
    assert document.page_content == "# Tides\n\nThe sea rises twice a day."
    assert document.reference == "https://example.org/tides" and document.title == "Tides"
    assert report.failure_for("https://example.org/missing").startswith("HTTP 404 (via Jina Reader")


def test_jina_text_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JINA_API_KEY", "jina-test-key")
    with jina_server() as api:
        (document,) = JinaCrawler(base_url=api.base, response_format="text").crawl_url("https://example.org/tides")
        assert api.requests[0].headers["accept"] == "text/plain"
    assert document.page_content == "# Tides\n\nThe sea rises twice a day."
    assert document.title == "Tides" and document.reference == "https://example.org/tides"


def test_jina_api_error_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JINA_API_KEY", "bad-key")
    error = {"code": 401, "name": "AuthenticationFailedError", "readableMessage": "Invalid API key"}
    with LocalServer({"*": Reply(json.dumps(error), status=401, content_type="application/json")}) as api:
        report = JinaCrawler(base_url=api.base).crawl("https://example.org/")
    assert report.failure_for("https://example.org/") == "Jina Reader: HTTP 401 Unauthorized: Invalid API key"


def test_jina_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JINA_API_KEY", "JINA_API_TOKEN", "JINAAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(MissingAPIKeyError, match="set the environment variable JINA_API_KEY"):
        JinaCrawler()


# ---------------------------------------------------------------------------------------------
# Crawl4AI adapter: only what holds without the package


def test_crawl4ai_without_the_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "crawl4ai", None)  # makes `import crawl4ai` fail
    with pytest.raises(MissingDependencyError) as error:
        Crawl4AICrawler()
    message = str(error.value)
    assert "pip install 'deepsearcher[crawl4ai]'" in message and "\n" not in message
    assert registry.info("Crawl4AICrawler").extra == "crawl4ai"
