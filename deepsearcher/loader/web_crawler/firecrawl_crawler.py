"""FireCrawl (https://firecrawl.dev) through its HTTP API: /v1/scrape for pages, /v1/crawl for sites.

Needs FIRECRAWL_API_KEY (sent as a Bearer token). `api_url` points at a self-hosted
FireCrawl (default https://api.firecrawl.dev, or FIRECRAWL_API_URL). FireCrawl's servers
fetch the pages, so only the URL scheme is checked here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.web_crawler._hosted import (
    HostedCrawler,
    ServiceError,
    api_error,
    now_iso,
)
from deepsearcher.loader.web_crawler.base import CrawlSink
from deepsearcher.types import Document
from deepsearcher.types.json import JSONObject

logger = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.firecrawl.dev"
SERVICE = "FireCrawl"
FINISHED = frozenset({"completed", "failed", "cancelled"})


@register_provider("web_crawler", env_var="FIRECRAWL_API_KEY")
class FireCrawlCrawler(HostedCrawler):
    """Pages as Markdown from FireCrawl.

    `crawl_url(url)` scrapes one page; with `max_depth >= 1` it starts a FireCrawl crawl
    job (at most `max_pages` pages, default 100; `include_patterns`/`exclude_patterns`
    become includePaths/excludePaths) and polls it every `poll_interval` seconds for at
    most `max_wait` seconds.
    """

    service = SERVICE
    api_key_env = ("FIRECRAWL_API_KEY",)
    extra_options = ("allow_backward_links",)

    def __init__(
        self,
        api_key: str | None = None,
        api_url: str | None = None,
        timeout: float = 60.0,
        poll_interval: float = 2.0,
        max_wait: float = 600.0,
        max_connections: int = 4,
        only_main_content: bool = True,
    ) -> None:
        super().__init__(api_key, timeout, max_connections)
        self.api_url = (api_url or os.environ.get("FIRECRAWL_API_URL") or DEFAULT_API_URL).rstrip("/")
        self.poll_interval = float(poll_interval)
        self.max_wait = float(max_wait)
        self.only_main_content = bool(only_main_content)

    async def _fetch(
        self,
        client: httpx.AsyncClient,
        url: str,
        options: dict[str, Any],
        sink: CrawlSink,
    ) -> None:
        depth = int(options.get("max_depth") or 0)
        if depth > 0:
            await self._crawl(client, url, depth, options, sink)
        else:
            await self._scrape(client, url, sink)

    # -- scrape ----------------------------------------------------------------------------

    async def _scrape(self, client: httpx.AsyncClient, url: str, sink: CrawlSink) -> None:
        body = {
            "url": url,
            "formats": ["markdown"],
            "onlyMainContent": self.only_main_content,
        }
        payload = await self._call(client, "POST", f"{self.api_url}/v1/scrape", sink, json=body)
        data = payload.get("data")
        if not isinstance(data, dict):
            raise ServiceError(f"{SERVICE}: response without data")
        problem, document = self._document(data, url, depth=0)
        if problem:
            raise ServiceError(problem)
        sink.stats.pages_fetched += 1
        assert document is not None  # _document gives a problem or a document
        await sink.document(document)

    # -- crawl -----------------------------------------------------------------------------

    async def _crawl(
        self,
        client: httpx.AsyncClient,
        url: str,
        depth: int,
        options: dict[str, Any],
        sink: CrawlSink,
    ) -> None:
        body: JSONObject = {
            "url": url,
            "maxDepth": depth,
            "limit": int(options.get("max_pages") or 100),
            "scrapeOptions": {
                "formats": ["markdown"],
                "onlyMainContent": self.only_main_content,
            },
        }
        for ours, theirs in (
            ("include_patterns", "includePaths"),
            ("exclude_patterns", "excludePaths"),
        ):
            value = options.get(ours)
            if value:
                body[theirs] = [value] if isinstance(value, str) else list(value)
        if options.get("allow_backward_links") is not None:
            body["allowBackwardLinks"] = bool(options["allow_backward_links"])
        if options.get("same_site") is False:
            body["allowExternalLinks"] = True
        started = await self._call(client, "POST", f"{self.api_url}/v1/crawl", sink, json=body)
        job = started.get("id")
        if not job:
            raise ServiceError(f"{SERVICE}: crawl started without a job id")
        deadline = time.monotonic() + self.max_wait
        status_url = f"{self.api_url}/v1/crawl/{job}"
        while True:
            status = await self._call(client, "GET", status_url, sink)
            state = str(status.get("status", ""))
            if state in FINISHED:
                break
            if time.monotonic() >= deadline:
                raise ServiceError(
                    f"{SERVICE}: crawl job {job} not finished after {self.max_wait:g} s (status {state or 'unknown'})"
                )
            await asyncio.sleep(self.poll_interval)
        if state != "completed":
            error = status.get("error") or state
            raise ServiceError(f"{SERVICE}: crawl job {job} {state}: {error}")
        produced = 0
        page: dict[str, Any] | None = status
        while page is not None:
            for item in page.get("data") or []:
                if not isinstance(item, dict):
                    continue
                problem, document = self._document(item, url, depth=None)
                source = (item.get("metadata") or {}).get("sourceURL") or url
                if problem:
                    await sink.failure(source, problem)
                else:
                    produced += 1
                    sink.stats.pages_fetched += 1
                    assert document is not None  # _document gives a problem or a document
                    await sink.document(document)
            following = page.get("next")
            page = await self._call(client, "GET", self._rebase(following), sink) if following else None
        if produced == 0:
            raise ServiceError(f"{SERVICE}: crawl job {job} completed without pages")

    def _rebase(self, url: str) -> str:
        """FireCrawl's `next` link, sent to our api_url (the key goes nowhere else)."""
        parts = urlsplit(url)
        base = urlsplit(self.api_url)
        return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))

    # -- helpers ---------------------------------------------------------------------------

    async def _call(
        self,
        client: httpx.AsyncClient,
        method: str,
        url: str,
        sink: CrawlSink,
        **kwargs: Any,
    ) -> JSONObject:
        sink.stats.requests += 1
        response = await client.request(method, url, **kwargs)
        if response.status_code >= 400:
            raise ServiceError(api_error(SERVICE, response))
        try:
            payload = response.json()
        except ValueError:
            raise ServiceError(f"{SERVICE}: response is not JSON") from None
        if not isinstance(payload, dict):
            raise ServiceError(f"{SERVICE}: unexpected response")
        if payload.get("success") is False:
            raise ServiceError(f"{SERVICE}: {payload.get('error') or 'request failed'}")
        return payload

    def _document(self, data: dict[str, Any], url: str, depth: int | None) -> tuple[str | None, Document | None]:
        meta = data.get("metadata") or {}
        source = meta.get("sourceURL") or url
        status = meta.get("statusCode")
        if isinstance(status, int) and status >= 400:
            return f"HTTP {status}" + (f" {meta['error']}" if meta.get("error") else "") + f" (via {SERVICE})", None
        text = (data.get("markdown") or "").strip()
        if not text:
            return f"{SERVICE}: no text returned for {source}", None
        final = meta.get("url") or source
        metadata: JSONObject = {
            "reference": final,
            "title": meta.get("title") or meta.get("ogTitle") or final,
            "fetched_at": now_iso(),
            "content_type": meta.get("contentType") or "text/markdown",
            "crawler": "FireCrawlCrawler",
        }
        if isinstance(status, int):
            metadata["status_code"] = status
        if depth is not None:
            metadata["depth"] = depth
        if final != source:
            metadata["redirected_from"] = [source]
        for key in ("description", "language"):
            if isinstance(meta.get(key), str) and meta[key]:
                metadata[key] = meta[key]
        return None, Document(page_content=text, metadata=metadata)
