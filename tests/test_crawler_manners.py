"""Crawler manners against a real HTTP server on 127.0.0.1: 429 / 503 are retried as the
server asks (Retry-After), bounded; robots.txt Crawl-delay and a per-host delay space the
requests to one host."""

from __future__ import annotations

import time

from website_server import LocalServer, Reply, page, text

from deepsearcher.loader.web_crawler.http_crawler import HttpCrawler


def crawler(**options) -> HttpCrawler:
    options.setdefault("allow_private_network", True)
    options.setdefault("retry_base_delay", 0.05)
    return HttpCrawler(**options)


def flaky(*replies: Reply):
    """A route answering `replies` in turn (the last one from then on), recording when."""
    times: list[float] = []

    def route(request) -> Reply:
        times.append(time.monotonic())
        return replies[min(len(times) - 1, len(replies) - 1)]

    route.times = times  # type: ignore[attr-defined]
    return route


GOOD = Reply(page("Tides", text("tides")))


def test_429_with_retry_after_is_retried_after_the_wait() -> None:
    route = flaky(Reply("slow down", status=429, headers={"Retry-After": "0.4"}, content_type="text/plain"), GOOD)
    with LocalServer({"/page": route}) as server:
        report = crawler(respect_robots=False).crawl(server.url("/page"))
    assert report.failures == [] and len(report.documents) == 1
    assert len(route.times) == 2 and route.times[1] - route.times[0] >= 0.4


def test_503_is_retried_a_bounded_number_of_times_then_named() -> None:
    route = flaky(Reply("down", status=503, content_type="text/plain"))
    with LocalServer({"/page": route}) as server:
        report = crawler(respect_robots=False, max_retries=2).crawl(server.url("/page"))
    assert len(route.times) == 3
    assert [f.reason for f in report.failures] == ["HTTP 503 Service Unavailable (3 attempts; max_retries 2)"]


def test_a_retry_after_beyond_the_cap_is_not_waited_for() -> None:
    route = flaky(Reply("later", status=429, headers={"Retry-After": "3600"}, content_type="text/plain"))
    started = time.monotonic()
    with LocalServer({"/page": route}) as server:
        report = crawler(respect_robots=False, max_retry_after=5).crawl(server.url("/page"))
    assert time.monotonic() - started < 3 and len(route.times) == 1
    assert "Retry-After (3600) is longer than max_retry_after (5 s)" in report.failures[0].reason


def test_robots_crawl_delay_spaces_requests_to_one_host() -> None:
    routes = {
        "/robots.txt": Reply("User-agent: *\nCrawl-delay: 1\n", content_type="text/plain"),
        "/": Reply(page("Home", text("home"), ["/a", "/b"])),
        "/a": Reply(page("A", text("alpha"))),
        "/b": Reply(page("B", text("beta"))),
    }
    stamps: list[float] = []

    def stamped(reply: Reply):
        return lambda request: (stamps.append(time.monotonic()), reply)[1]

    with LocalServer(
        {path: (reply if path == "/robots.txt" else stamped(reply)) for path, reply in routes.items()}
    ) as server:
        report = crawler(max_connections=4).crawl(server.url("/"), max_depth=1)
    assert len(report.documents) == 3
    gaps = [later - earlier for earlier, later in zip(stamps, stamps[1:], strict=False)]
    assert len(stamps) == 3 and min(gaps) >= 0.95


def test_per_host_delay_without_robots() -> None:
    stamps: list[float] = []
    route = lambda request: (stamps.append(time.monotonic()), GOOD)[1]  # noqa: E731
    with LocalServer({"*": route}) as server:
        crawler(respect_robots=False, per_host_delay=0.2, max_connections=4).crawl(
            [server.url(f"/p{i}") for i in range(3)]
        )
    gaps = [later - earlier for earlier, later in zip(stamps, stamps[1:], strict=False)]
    # Spaced by the crawler when each request is sent; arrival here can jitter on a loaded
    # machine, so half the delay is the bound (without the delay the gaps are ~1 ms).
    assert len(stamps) == 3 and min(gaps) >= 0.1
