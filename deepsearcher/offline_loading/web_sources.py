"""Turn a crawl into one loaded source per page, as the crawl goes (no page list in memory).

A failed start URL is a failure of the load; a failed link found while crawling is
named in the summary too but does not fail the load (the pages that worked are kept).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from deepsearcher.loader.web_crawler._errors import URLRefusedError
from deepsearcher.loader.web_crawler._urls import url_key
from deepsearcher.loader.web_crawler.base import BaseCrawler, CrawlFailure, CrawlSkip
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.types import Document


def _key(url: str) -> str:
    try:
        return url_key(url)
    except URLRefusedError:
        return url


def iter_web_sources(crawler: BaseCrawler, urls: list[str], **crawl_kwargs: Any) -> Iterator[LoadedSource]:
    """Documents sharing a reference (a PDF's pages) arrive together and become one source."""
    start_keys = {_key(url) for url in urls}
    current: LoadedSource | None = None
    for item in crawler.stream(urls, **crawl_kwargs):
        if isinstance(item, Document):
            if current is not None and current.reference == item.reference:
                current.documents.append(item)
                continue
            if current is not None:
                yield current
            current = LoadedSource(item.reference, documents=[item])
            continue
        if current is not None:
            yield current
            current = None
        if isinstance(item, CrawlFailure):
            yield LoadedSource(item.url, error=item.reason, fatal=_key(item.url) in start_keys)
        elif isinstance(item, CrawlSkip):
            yield LoadedSource(item.url, skip_reason=item.reason)
    if current is not None:
        yield current
