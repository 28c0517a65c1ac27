"""fastCRW (https://fastcrw.com), a Firecrawl-compatible scraping API, cloud or self-hosted.

The same /v1/scrape and /v1/crawl calls as FireCrawl, so this is `FireCrawlCrawler`
pointed at fastCRW: key from $CRW_API_KEY, API URL from `api_url`, else $CRW_API_URL
(a self-hosted CRW, e.g. http://localhost:3000), else https://fastcrw.com/api.
"""

from __future__ import annotations

import os
from typing import Any

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.web_crawler.firecrawl_crawler import FireCrawlCrawler

DEFAULT_API_URL = "https://fastcrw.com/api"


@register_provider("web_crawler", env_var="CRW_API_KEY", aliases=("FastCRWCrawler",))
class CrwCrawler(FireCrawlCrawler):
    """Pages as Markdown from fastCRW; options as FireCrawlCrawler's."""

    service = "fastCRW"
    api_key_env = ("CRW_API_KEY",)

    def __init__(self, api_key: str | None = None, api_url: str | None = None, **kwargs: Any) -> None:
        super().__init__(api_key, api_url or os.environ.get("CRW_API_URL") or DEFAULT_API_URL, **kwargs)
