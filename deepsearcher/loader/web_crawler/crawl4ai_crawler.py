"""Crawl4AI (https://github.com/unclecode/crawl4ai): a headless browser, for pages that need JavaScript.

Optional: `pip install 'deepsearcher[crawl4ai]'` (then `crawl4ai-setup` to install the
browser). The browser fetches the pages, so only the URL scheme is checked here.
"""

from __future__ import annotations

import logging
from typing import Any

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.loader.web_crawler._hosted import (
    check_crawl_kwargs,
    for_each,
    now_iso,
)
from deepsearcher.loader.web_crawler.base import BaseCrawler, CrawlSink
from deepsearcher.types import Document
from deepsearcher.types.json import JSONObject

logger = logging.getLogger(__name__)


@register_provider("web_crawler", extra="crawl4ai", requires=("crawl4ai",))
class Crawl4AICrawler(BaseCrawler):
    """Pages rendered by a headless browser, as Markdown.

    `browser_config` goes to crawl4ai.BrowserConfig, `run_config` to CrawlerRunConfig.
    With `max_depth >= 1` crawl4ai's breadth-first deep crawl is used when the installed
    version has it (at most `max_pages` pages).
    """

    def __init__(
        self,
        browser_config: dict[str, Any] | None = None,
        run_config: dict[str, Any] | None = None,
        max_connections: int = 4,
    ) -> None:
        super().__init__()
        self._crawl4ai = require("crawl4ai", "crawl4ai", "Crawl4AICrawler")
        self.browser_config = dict(browser_config or {})
        self.run_config = dict(run_config or {})
        self.max_connections = int(max_connections)

    async def _run(self, urls: list[str], sink: CrawlSink, **kwargs: object) -> None:
        options = check_crawl_kwargs("Crawl4AICrawler", kwargs)
        c4a = self._crawl4ai
        run_options = dict(self.run_config)
        depth = int(options.get("max_depth") or 0)
        if depth > 0:
            strategy = self._deep_strategy(depth, options)
            if strategy is not None:
                run_options["deep_crawl_strategy"] = strategy
            else:
                logger.warning(
                    "This crawl4ai version has no deep crawling: max_depth=%s is ignored",
                    depth,
                )
        browser = c4a.BrowserConfig(**self.browser_config)
        async with c4a.AsyncWebCrawler(config=browser) as crawler:

            async def one(url: str) -> None:
                try:
                    sink.stats.requests += 1
                    outcome = await crawler.arun(url=url, config=c4a.CrawlerRunConfig(**run_options))
                except Exception as exc:  # noqa: BLE001 - crawl4ai raises many kinds; report per URL
                    await sink.failure(url, f"Crawl4AI: {type(exc).__name__}: {exc}")
                    return
                results = outcome if isinstance(outcome, list) else [outcome]
                for result in results:
                    await self._emit(result, url, sink)

            await for_each(urls, self.max_connections, one)

    def _deep_strategy(self, depth: int, options: dict[str, Any]) -> Any:
        try:
            from crawl4ai.deep_crawling import BFSDeepCrawlStrategy  # type: ignore[import-not-found]
        except ImportError:
            return None
        return BFSDeepCrawlStrategy(
            max_depth=depth,
            include_external=options.get("same_site") is False,
            max_pages=int(options.get("max_pages") or 100),
        )

    async def _emit(self, result: object, url: str, sink: CrawlSink) -> None:
        source = getattr(result, "url", None) or url
        if not getattr(result, "success", False):
            reason = getattr(result, "error_message", None) or "crawl failed"
            status = getattr(result, "status_code", None)
            await sink.failure(source, f"Crawl4AI: {reason}" + (f" (HTTP {status})" if status else ""))
            return
        markdown = getattr(result, "markdown", None)
        if markdown is not None and not isinstance(markdown, str):
            markdown = (
                getattr(markdown, "fit_markdown", None) or getattr(markdown, "raw_markdown", None) or str(markdown)
            )
        text = (markdown or "").strip()
        if not text:
            await sink.failure(source, "Crawl4AI: no text extracted")
            return
        meta = getattr(result, "metadata", None) or {}
        final = getattr(result, "redirected_url", None) or source
        metadata: JSONObject = {
            "reference": final,
            "title": meta.get("title") or final,
            "fetched_at": now_iso(),
            "content_type": "text/html",
            "crawler": "Crawl4AICrawler",
        }
        status = getattr(result, "status_code", None)
        if isinstance(status, int):
            metadata["status_code"] = status
        depth = meta.get("depth")
        if isinstance(depth, int):
            metadata["depth"] = depth
        if final != source:
            metadata["redirected_from"] = [source]
        sink.stats.pages_fetched += 1
        await sink.document(Document(page_content=text, metadata=metadata))
