"""The built-in crawler: plain HTTP(S) with httpx, main-text extraction with trafilatura.

No API key, no browser. What it does, in order, for every URL:

1. refuse anything but http/https, and hosts that resolve to private, loopback,
   link-local, multicast, reserved or cloud-metadata addresses (unless
   `allow_private_network`; metadata addresses are refused always). The addresses
   checked are the addresses connected to, and every redirect hop is checked again;
2. respect robots.txt (fetched once per origin, through the same client);
3. fetch with a bounded connection pool, a per-request timeout and a streamed size cap,
   following at most `max_redirects` redirects by hand and recording them;
4. HTML → Markdown main text (title and headings kept; navigation, footers and
   cookie banners dropped); PDF and plain text → the file loaders; a sitemap given as a
   start URL → its pages; anything else → a failure naming the content type;
5. space requests to one host (`per_host_delay`, robots.txt `Crawl-delay`) and retry
   429 / 503 answers as the server asks (Retry-After), at most `max_retries` times;
6. follow links up to `max_depth`, on the same site unless `same_site=False`,
   filtered by `include_patterns` / `exclude_patterns`, at most `max_pages` pages,
   each page once (URLs normalised).

Every URL that gives no document is reported with its reason (see base.py).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import tempfile
import threading
import urllib.robotparser
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urljoin, urlsplit

import httpx

from deepsearcher import __version__
from deepsearcher.config.registry import register_provider
from deepsearcher.loader.web_crawler._errors import URLRefusedError
from deepsearcher.loader.web_crawler._extract import (
    HTML_TYPES,
    PDF_TYPES,
    TEXT_TYPES,
    UNKNOWN_TYPES,
    XML_TYPES,
    NotASitemap,
    decompress_gzip,
    extract_html,
    mime_type,
    parse_sitemap,
    sniff_kind,
)
from deepsearcher.loader.web_crawler._manners import (
    RETRY_STATUSES,
    HostPacer,
    retry_delay,
)
from deepsearcher.loader.web_crawler._safety import (
    AddressPolicy,
    ResolutionError,
    guard_transport,
)
from deepsearcher.loader.web_crawler._urls import (
    BINARY_EXTENSIONS,
    DEFAULT_PORTS,
    URLPattern,
    compile_patterns,
    extension_of,
    join_url,
    normalize_url,
    origin_of,
    site_of,
    url_key,
)
from deepsearcher.loader.web_crawler.base import BaseCrawler, CrawlSink
from deepsearcher.types import ConfigurationError, Document, LoaderError
from deepsearcher.types.errors import cause_chain
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from deepsearcher.loader.file_loader.base import BaseLoader

logger = logging.getLogger(__name__)

ROBOTS_AGENT = "DeepSearcher"
DEFAULT_USER_AGENT = (
    f"DeepSearcher/{'.'.join(__version__.split('.')[:2])} "
    "(research crawler; +https://github.com/zilliztech/deep-searcher)"
)
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
ROBOTS_MAX_BYTES = 512 * 1024
MAX_SITEMAP_NESTING = 3
ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5"


def format_size(size: int) -> str:
    """10485760 → '10 MB' (binary units, written the way people say them)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


@dataclass(frozen=True)
class HttpCrawlerOptions:
    """HttpCrawler settings: provide_settings.web_crawler.config, or keyword arguments per call."""

    max_depth: int = 0  # 0: only the given pages; 1: also the pages they link to; ...
    max_pages: int = 100  # pages fetched per crawl, start URLs included
    same_site: bool = True  # follow links only to the start URLs' sites (host + port)
    include_patterns: tuple[str, ...] | list[str] | str | None = None  # followed links must match one
    exclude_patterns: tuple[str, ...] | list[str] | str | None = None  # followed links matching one are skipped
    respect_robots: bool = True  # robots.txt and <meta name="robots" content="noindex/nofollow">
    allow_private_network: bool = False  # crawl private/loopback/link-local addresses (never metadata)
    max_connections: int = 8
    timeout: float = 15.0  # seconds, per request (each redirect hop and robots.txt included)
    max_redirects: int = 5
    max_bytes: int = 10 * 1024 * 1024  # per response, after decompression
    user_agent: str = DEFAULT_USER_AGENT
    headers: dict[str, str] | None = None  # extra request headers
    dedupe_content: bool = True  # a page with the same text as an earlier one is skipped
    per_host_delay: float = 0.0  # seconds between two requests to one host (robots.txt Crawl-delay may raise it)
    max_crawl_delay: float = 10.0  # a larger robots.txt Crawl-delay is capped to this
    max_retries: int = 2  # retries of a 429 / 503 answer
    retry_base_delay: float = 1.0  # backoff when the server gives no Retry-After (doubles each retry)
    max_retry_after: float = 30.0  # a longer Retry-After is not waited for: the page fails naming it
    #: url -> {"etag", "last_modified"} of a stored copy: that start URL is fetched conditionally
    #: (If-None-Match / If-Modified-Since) and a 304 answer skips it as not modified (load --refresh).
    validators: dict[str, dict[str, str]] | None = None

    def validated(self) -> HttpCrawlerOptions:
        def positive(name: str, value: object, kind: type, minimum: float) -> None:
            if isinstance(value, bool) or not isinstance(value, kind) or cast(float, value) < minimum:
                raise ConfigurationError(
                    f"web_crawler option {name} must be {'an integer' if kind is int else 'a number'} "
                    f">= {minimum:g}, got {value!r} (provide_settings.web_crawler.config.{name})."
                )

        positive("max_depth", self.max_depth, int, 0)
        positive("max_pages", self.max_pages, int, 1)
        positive("max_connections", self.max_connections, int, 1)
        positive("max_redirects", self.max_redirects, int, 0)
        positive("max_bytes", self.max_bytes, int, 1)
        positive("timeout", self.timeout, (int, float), 0.001)  # type: ignore[arg-type]
        positive("max_retries", self.max_retries, int, 0)
        for name in (
            "per_host_delay",
            "max_crawl_delay",
            "retry_base_delay",
            "max_retry_after",
        ):
            positive(name, getattr(self, name), (int, float), 0)  # type: ignore[arg-type]
        for name in (
            "same_site",
            "respect_robots",
            "allow_private_network",
            "dedupe_content",
        ):
            if not isinstance(getattr(self, name), bool):
                raise ConfigurationError(
                    f"web_crawler option {name} must be true or false, got {getattr(self, name)!r} "
                    f"(provide_settings.web_crawler.config.{name})."
                )
        for name in ("include_patterns", "exclude_patterns"):
            try:
                compile_patterns(getattr(self, name))
            except (TypeError, re.error) as exc:
                raise ConfigurationError(f"web_crawler option {name}: {exc}") from exc
        return self

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


_LOADER_LOCK = threading.Lock()
_ALIASES = {"limit": "max_pages", "depth": "max_depth"}


def _options(base: HttpCrawlerOptions, values: dict[str, Any]) -> HttpCrawlerOptions:
    values = {_ALIASES.get(key, key): value for key, value in values.items()}
    unknown = sorted(set(values) - set(HttpCrawlerOptions.names()))
    if unknown:
        raise ConfigurationError(
            f"Unknown HttpCrawler option(s) {', '.join(unknown)}; allowed: "
            f"{', '.join(HttpCrawlerOptions.names())} (provide_settings.web_crawler.config)."
        )
    return replace(base, **values).validated() if values else base.validated()


@register_provider("web_crawler", aliases=("http", "httpx"))
class HttpCrawler(BaseCrawler):
    """The default crawler: no API key, no browser; see the module docstring.

    Options (constructor or per call, e.g. `crawl_url(url, max_depth=1)`): see
    HttpCrawlerOptions.
    """

    def __init__(self, **config: object) -> None:
        super().__init__()
        self.options = _options(HttpCrawlerOptions(), config)
        self._loader: BaseLoader | None = None

    async def _run(self, urls: list[str], sink: CrawlSink, **kwargs: object) -> None:
        options = _options(self.options, kwargs)
        await _CrawlRun(self, options, sink).run(urls)

    def _file_loader(self) -> BaseLoader:
        """The default FileLoader (PDF, text, Markdown), built once (loader threads share it)."""
        with _LOADER_LOCK:
            if self._loader is None:
                loader_cls: type[BaseLoader]
                try:
                    from deepsearcher.loader.file_loader.file_loader import FileLoader

                    loader_cls = FileLoader
                except ImportError:  # pragma: no cover - renamed module: ask the registry
                    from deepsearcher.loader.file_loader import registry

                    loader_cls = registry.get("FileLoader")
                self._loader = loader_cls()
            return self._loader


# ---------------------------------------------------------------------------------------


class _Fail(Exception):
    """Ends the handling of one URL. kind: 'fail', 'skip', or 'skip_if_discovered'."""

    def __init__(self, reason: str, kind: str = "fail") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


class _Busy(_Fail):
    """A 429 / 503 answer, with the server's Retry-After (retried by `_fetch`)."""

    def __init__(self, reason: str, status: int, retry_after: str | None) -> None:
        super().__init__(reason)
        self.status = status
        self.retry_after = retry_after


@dataclass
class _Item:
    url: str
    depth: int
    explicit: bool  # a start URL the caller gave (its problems are failures, not skips)
    kind: str = "page"  # or "sitemap" (a child of a sitemap index)
    parent: str | None = None
    nesting: int = 0


@dataclass
class _Response:
    url: str
    status: int = 0
    mime: str = ""
    body: bytes = b""
    redirected_from: list[str] = field(default_factory=list)
    redirect_to: str | None = None
    etag: str = ""
    last_modified: str = ""


class _CrawlRun:
    """The state of one crawl: client, queue, seen URLs, robots.txt cache."""

    def __init__(self, crawler: HttpCrawler, options: HttpCrawlerOptions, sink: CrawlSink) -> None:
        self.crawler = crawler
        self.o = options
        self.sink = sink
        self.stats = sink.stats
        self.policy = AddressPolicy(options.allow_private_network, dns_timeout=options.timeout)
        self.include: tuple[URLPattern, ...] = compile_patterns(options.include_patterns)
        self.exclude: tuple[URLPattern, ...] = compile_patterns(options.exclude_patterns)
        self.queue: asyncio.PriorityQueue[tuple[int, int, _Item]] = asyncio.PriorityQueue()
        self.order = itertools.count()
        self.claimed: set[str] = set()  # url_key of every URL fetched, queued or decided on
        self.sites: set[tuple[str, int | None]] = set()
        self.pages = 0  # pages queued (counts toward max_pages)
        self.robots: dict[str, asyncio.Future[urllib.robotparser.RobotFileParser | None]] = {}
        self.hashes: dict[str, str] = {}
        self.pacer = HostPacer(options.per_host_delay, options.max_crawl_delay)
        self.client: httpx.AsyncClient

    # -- driver -------------------------------------------------------------------------------

    async def run(self, urls: list[str]) -> None:
        limits = httpx.Limits(
            max_connections=self.o.max_connections,
            max_keepalive_connections=self.o.max_connections,
        )
        transport = httpx.AsyncHTTPTransport(limits=limits, retries=0)
        if not guard_transport(transport, self.policy):
            logger.debug("httpx connection pool not guardable; checking addresses before each request only")
        headers = {
            "User-Agent": self.o.user_agent,
            "Accept": ACCEPT,
            **(self.o.headers or {}),
        }
        async with httpx.AsyncClient(
            transport=transport,
            headers=headers,
            timeout=httpx.Timeout(self.o.timeout),
            follow_redirects=False,
            trust_env=False,
        ) as client:
            self.client = client
            for url in urls:
                self.sites.add(site_of(url))
            for url in urls:
                await self._add_start(url)
            workers = [asyncio.ensure_future(self._worker()) for _ in range(self.o.max_connections)]
            try:
                await self.queue.join()
            finally:
                for worker in workers:
                    worker.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                for future in self.robots.values():
                    future.cancel()

    async def _add_start(self, url: str) -> None:
        self.claimed.add(url_key(url))
        if self.pages >= self.o.max_pages:
            await self.sink.failure(url, f"not fetched: max_pages ({self.o.max_pages}) reached")
            return
        self.pages += 1
        self._put(_Item(url, depth=0, explicit=True))

    def _put(self, item: _Item) -> None:
        self.queue.put_nowait((item.depth, next(self.order), item))

    def _scope_problem(self, url: str) -> str | None:
        """Why a discovered link is not followed, or None."""
        if self.o.same_site and site_of(url) not in self.sites:
            return "off-site link (same_site is on)"
        for pattern in self.exclude:
            if pattern.matches(url):
                return f"excluded by pattern {pattern.source!r}"
        if self.include and not any(p.matches(url) for p in self.include):
            return "matches none of include_patterns"
        ext = extension_of(url)
        if ext in BINARY_EXTENSIONS:
            return f"not a page (.{ext} file)"
        return None

    async def _discover(self, url: str, depth: int, parent: str) -> None:
        key = url_key(url)
        if key in self.claimed:
            return
        self.claimed.add(key)
        problem = self._scope_problem(url)
        if problem:
            await self.sink.skip(url, problem)
            return
        if self.pages >= self.o.max_pages:
            await self.sink.skip(url, f"not fetched: max_pages ({self.o.max_pages}) reached")
            return
        self.pages += 1
        self._put(_Item(url, depth=depth, explicit=False, parent=parent))

    async def _worker(self) -> None:
        while True:
            _, _, item = await self.queue.get()
            try:
                await self._handle(item)
            except _Fail as fail:
                if fail.kind == "skip" or (fail.kind == "skip_if_discovered" and not item.explicit):
                    await self.sink.skip(item.url, fail.reason)
                else:
                    await self.sink.failure(item.url, fail.reason)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - one page's bug must not end the crawl
                logger.exception("Unexpected error crawling %s", item.url)
                await self.sink.failure(item.url, f"internal error: {type(exc).__name__}: {exc}")
            finally:
                self.queue.task_done()

    # -- one URL --------------------------------------------------------------------------------

    async def _handle(self, item: _Item) -> None:
        if item.kind == "sitemap":
            response = await self._fetch(item.url, item, "sitemap")
            await self._sitemap(response, item)
            return
        if self.o.respect_robots and not await self._robots_allow(item.url):
            self.pages -= 1
            raise _Fail("disallowed by robots.txt", "skip_if_discovered")
        response = await self._fetch(item.url, item, "page")
        if item.explicit:
            self.sites.add(site_of(response.url))
        kind = _kind(response)
        if kind in ("xml", "gzip") and item.explicit:
            self.pages -= 1  # a sitemap is not a page
            await self._sitemap(response, item)
            return
        if kind == "html":
            documents = await self._html(response, item)
        elif kind in ("pdf", "text"):
            documents = await asyncio.to_thread(self._load_file, response, item, kind)
        else:
            raise _Fail(_unsupported(response.mime))
        if self.o.dedupe_content:
            digest = documents[0].content_hash if len(documents) == 1 else "|".join(d.content_hash for d in documents)
            earlier = self.hashes.setdefault(digest, response.url)
            if earlier != response.url:
                raise _Fail(f"same content as {earlier}", "skip")
        await self.sink.documents(documents)

    async def _html(self, response: _Response, item: _Item) -> list[Document]:
        want_links = item.depth < self.o.max_depth
        page = await asyncio.to_thread(extract_html, response.body, response.url, want_links)
        if want_links and not (page.nofollow and self.o.respect_robots):
            for link in page.links:
                await self._discover(link, item.depth + 1, parent=response.url)
        if page.noindex and self.o.respect_robots:
            raise _Fail(
                'the page asks not to be indexed (<meta name="robots" content="noindex">)',
                "skip_if_discovered",
            )
        if not page.text:
            raise _Fail("no main text found in the HTML page")
        metadata = self._metadata(response, item, page.title or response.url)
        for key, value in page.extra.items():
            metadata.setdefault(key, value)
        return [Document(page_content=page.text, metadata=metadata)]

    def _load_file(self, response: _Response, item: _Item, kind: str) -> list[Document]:
        """PDF and text bodies go through the file loaders (via a temp file), then get the URL as reference."""
        if kind == "pdf":
            suffix = ".pdf"
        elif response.mime in ("text/markdown", "text/x-markdown"):
            suffix = ".md"
        else:
            suffix = ".txt"
        name = _file_name(response.url, suffix)
        with tempfile.TemporaryDirectory(prefix="deepsearcher-crawl-") as folder:
            path = os.path.join(folder, name)
            with open(path, "wb") as handle:
                handle.write(response.body)
            try:
                documents = self.crawler._file_loader().load_file(path)
            except LoaderError as exc:
                raise _Fail(exc.reason) from exc
        if not documents:
            raise _Fail("no text found in the file")
        result = []
        for document in documents:
            metadata = {k: (response.url if v == path else v) for k, v in document.metadata.items()}
            metadata.pop("content_hash", None)
            metadata.update(self._metadata(response, item, metadata.get("title") or name))
            result.append(Document(page_content=document.page_content, metadata=metadata))
        return result

    def _metadata(self, response: _Response, item: _Item, title: str) -> JSONObject:
        metadata: JSONObject = {
            "reference": response.url,
            "title": title,
            "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "content_type": response.mime,
            "status_code": response.status,
            "depth": item.depth,
            "crawler": "HttpCrawler",
        }
        if response.etag:
            metadata["etag"] = response.etag
        if response.last_modified:
            metadata["last_modified"] = response.last_modified
        if response.redirected_from:
            metadata["redirected_from"] = list(response.redirected_from)
        if item.parent:
            metadata["linked_from"] = item.parent
        return metadata

    async def _sitemap(self, response: _Response, item: _Item) -> None:
        body = response.body
        if body[:2] == b"\x1f\x8b":
            try:
                body = decompress_gzip(body, self.o.max_bytes)
            except OverflowError:
                raise _Fail(f"larger than {format_size(self.o.max_bytes)} cap (max_bytes) once decompressed") from None
            except NotASitemap as exc:
                raise _Fail(f"not a sitemap: {exc}") from None
        try:
            kind, locations = await asyncio.to_thread(parse_sitemap, body)
        except NotASitemap as exc:
            if item.kind == "sitemap":
                raise _Fail(f"not a sitemap: {exc}") from None
            raise _Fail(f"{_unsupported(response.mime)}; as a sitemap: {exc}") from None
        self.sites.add(site_of(response.url))
        for location in locations:
            url = join_url(response.url, location)
            if url is None:
                await self.sink.skip(location, "sitemap entry is not an http(s) URL")
            elif kind == "urlset":
                await self._discover(url, 0, parent=response.url)
            elif item.nesting >= MAX_SITEMAP_NESTING:
                await self.sink.skip(url, f"sitemap index nested deeper than {MAX_SITEMAP_NESTING}")
            elif url_key(url) not in self.claimed:
                self.claimed.add(url_key(url))
                self._put(
                    _Item(
                        url,
                        depth=0,
                        explicit=False,
                        kind="sitemap",
                        parent=response.url,
                        nesting=item.nesting + 1,
                    )
                )

    # -- robots.txt -----------------------------------------------------------------------------

    async def _robots_allow(self, url: str) -> bool:
        origin = origin_of(url)
        future = self.robots.get(origin)
        if future is None:
            future = asyncio.ensure_future(self._load_robots(origin))
            self.robots[origin] = future
        parser = await asyncio.shield(future)
        return parser is None or parser.can_fetch(ROBOTS_AGENT, url)

    async def _load_robots(self, origin: str) -> urllib.robotparser.RobotFileParser | None:
        """The origin's rules; None (everything allowed) when it has none or cannot be read."""
        url = f"{origin}/robots.txt"
        try:
            response = await self._fetch(url, None, "robots")
        except _Fail as fail:
            logger.debug(
                "robots.txt of %s not read (%s); crawling as allowed",
                origin,
                fail.reason,
            )
            return None
        parser = urllib.robotparser.RobotFileParser(url)
        if response.status in (401, 403):
            parser.disallow_all = True  # type: ignore[attr-defined]  # what read() sets on a 401/403
            return parser
        if response.status >= 400:
            return None
        parser.parse(response.body.decode("utf-8", errors="replace").splitlines())
        parser.modified()
        delay = parser.crawl_delay(ROBOTS_AGENT)
        self.pacer.set_crawl_delay(origin, float(delay) if delay is not None else None)
        return parser

    # -- HTTP -------------------------------------------------------------------------------------

    async def _fetch(self, url: str, item: _Item | None, purpose: str) -> _Response:
        """GET `url`, following redirects by hand so every hop passes the same checks."""
        chain: list[str] = []
        own_keys = {url_key(url)}
        current = url
        for hop in range(self.o.max_redirects + 1):
            if hop:
                await self._check_hop(current, item, purpose, own_keys)
            try:
                await self._check_address(current)
                response = await self._send_politely(current, item, purpose)
            except _Fail as fail:
                raise _Fail(
                    f"redirected to {current}: {fail.reason}" if hop else fail.reason,
                    fail.kind,
                ) from None
            except (URLRefusedError, ResolutionError) as exc:
                raise _Fail(f"redirected to {current}: {exc.reason}" if hop else exc.reason) from None
            except (asyncio.TimeoutError, httpx.TimeoutException):
                raise _Fail(
                    f"timed out after {self.o.timeout:g} s" + (f" (redirected to {current})" if hop else "")
                ) from None
            except httpx.HTTPError as exc:
                reason = _describe_http_error(exc)
                raise _Fail(f"redirected to {current}: {reason}" if hop else reason) from None
            if response.redirect_to is None:
                response.redirected_from = chain
                return response
            try:
                target = normalize_url(urljoin(current, response.redirect_to))
            except URLRefusedError as exc:
                raise _Fail(f"redirect to {response.redirect_to} refused: {exc.reason}") from None
            if target == current or target in chain:
                raise _Fail(f"redirect loop ({' -> '.join([*chain, current, target])})")
            chain.append(current)
            current = target
        raise _Fail(f"too many redirects (more than {self.o.max_redirects}, ending at {current})")

    async def _send_politely(self, url: str, item: _Item | None, purpose: str) -> _Response:
        """`_send` in the host's turn (per-host delay, Crawl-delay), retrying 429 / 503 as
        the server asks (Retry-After), at most `max_retries` times."""
        origin = origin_of(url)
        for attempt in itertools.count():
            if purpose != "robots":  # robots.txt itself is what tells the Crawl-delay
                await self.pacer.wait_turn(origin)
            try:
                return await asyncio.wait_for(self._send(url, item, purpose), self.o.timeout)
            except _Busy as busy:
                delay = retry_delay(
                    busy.status,
                    busy.retry_after,
                    attempt,
                    self.o.retry_base_delay,
                    self.o.max_retry_after,
                )
                if delay is None:
                    cap = f"max_retry_after ({self.o.max_retry_after:g} s)"
                    raise _Fail(f"{busy.reason}; its Retry-After ({busy.retry_after}) is longer than {cap}") from None
                if attempt >= self.o.max_retries:
                    tries = attempt + 1
                    raise _Fail(
                        f"{busy.reason} ({tries} attempt{'s' if tries > 1 else ''}; max_retries {self.o.max_retries})"
                    ) from None
                logger.info("%s answered %s; retrying in %.1f s", url, busy.status, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _check_hop(self, target: str, item: _Item | None, purpose: str, own_keys: set[str]) -> None:
        if purpose != "page" or item is None:
            return
        if self.o.same_site and not item.explicit and site_of(target) not in self.sites:
            raise _Fail(
                f"redirects off-site to {target} (same_site is on)",
                "skip_if_discovered",
            )
        if self.o.respect_robots and not await self._robots_allow(target):
            raise _Fail(
                f"redirects to {target}, which robots.txt disallows",
                "skip_if_discovered",
            )
        key = url_key(target)
        if key not in own_keys:
            if key in self.claimed:
                raise _Fail(f"redirects to {target}, which is crawled already", "skip")
            self.claimed.add(key)
            own_keys.add(key)

    async def _check_address(self, url: str) -> None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or DEFAULT_PORTS[parts.scheme]
        await self.policy.resolve(host, port)

    async def _send(self, url: str, item: _Item | None, purpose: str) -> _Response:
        self.stats.requests += 1
        conditional = conditional_headers(self.o.validators, url) if item is not None and item.explicit else {}
        response = await self.client.send(self.client.build_request("GET", url, headers=conditional), stream=True)
        try:
            status = response.status_code
            if status == 304 and conditional:
                raise _Fail(NOT_MODIFIED, "skip")
            if status in REDIRECT_CODES:
                location = response.headers.get("location")
                if not location:
                    raise _Fail(f"HTTP {status} redirect without a Location header")
                return _Response(url=url, status=status, redirect_to=location)
            if purpose == "page":
                self.stats.pages_fetched += 1
            mime = mime_type(response.headers.get("content-type"))
            if purpose == "robots":
                if status >= 400:
                    return _Response(url=url, status=status, mime=mime)
                max_bytes = min(self.o.max_bytes, ROBOTS_MAX_BYTES)
            else:
                max_bytes = self.o.max_bytes
            if status in RETRY_STATUSES:
                raise _Busy(
                    f"HTTP {status} {response.reason_phrase}".strip(),
                    status,
                    response.headers.get("retry-after"),
                )
            if not 200 <= status < 300:
                raise _Fail(f"HTTP {status} {response.reason_phrase}".strip())
            if purpose == "page" and not _readable(mime, item):
                raise _Fail(_unsupported(mime))
            body = await self._read(response, max_bytes)
            return _Response(
                url=url,
                status=status,
                mime=mime,
                body=body,
                etag=response.headers.get("etag", ""),
                last_modified=response.headers.get("last-modified", ""),
            )
        finally:
            await response.aclose()

    async def _read(self, response: httpx.Response, max_bytes: int) -> bytes:
        too_large = f"larger than {format_size(max_bytes)} cap (max_bytes)"
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > max_bytes and "content-encoding" not in response.headers:
            raise _Fail(f"{too_large}: Content-Length is {length} bytes")
        chunks: list[bytes] = []
        total = 0
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            self.stats.bytes_received += len(chunk)
            if total > max_bytes:
                raise _Fail(too_large)
            chunks.append(chunk)
        return b"".join(chunks)


#: Why a refreshed page was not loaded again: its server says the stored copy is current.
NOT_MODIFIED = "not modified since it was loaded (HTTP 304): the stored copy is current"


def conditional_headers(validators: dict[str, dict[str, str]] | None, url: str) -> dict[str, str]:
    """If-None-Match / If-Modified-Since for `url` from the validators of its stored copy."""
    stored = (validators or {}).get(url) or {}
    headers = {}
    if stored.get("etag"):
        headers["If-None-Match"] = stored["etag"]
    if stored.get("last_modified"):
        headers["If-Modified-Since"] = stored["last_modified"]
    return headers


def _readable(mime: str, item: _Item | None) -> bool:
    """Whether a page response is worth reading, judged by its declared content type."""
    if mime in HTML_TYPES or mime in PDF_TYPES or mime in TEXT_TYPES or mime in UNKNOWN_TYPES:
        return True
    return mime in XML_TYPES and item is not None and item.explicit


def _kind(response: _Response) -> str | None:
    mime = response.mime
    if mime in HTML_TYPES:
        return "html"
    if mime in PDF_TYPES:
        return "pdf"
    if mime in TEXT_TYPES:
        return "text"
    if mime in XML_TYPES or mime.endswith("+xml"):
        return "gzip" if response.body[:2] == b"\x1f\x8b" else "xml"
    if mime in UNKNOWN_TYPES:
        return sniff_kind(response.body)
    return None


def _unsupported(mime: str) -> str:
    shown = mime or "unknown"
    return f"not a text page: content type {shown} is not crawled (HTML, PDF and plain text are)"


def _describe_http_error(exc: httpx.HTTPError) -> str:
    if any(isinstance(cause, ConnectionRefusedError) for cause in cause_chain(exc)):
        return "connection refused"
    message = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        lowered = message.lower()
        if "refused" in lowered or "errno 111" in lowered or "all connection attempts failed" in lowered:
            return "connection refused"
        if "certificate" in lowered or "ssl" in lowered:
            return f"TLS error ({message})"
        return f"connection failed ({message})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"protocol error ({message})"
    return f"{type(exc).__name__}: {message}"


def _file_name(url: str, suffix: str) -> str:
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:100] or "page"
    return name if name.lower().endswith(suffix) else f"{name}{suffix}"
