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
from deepsearcher.vector_db.base import BaseVectorDB


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


def is_web_reference(reference: str) -> bool:
    return reference.lower().startswith(("http://", "https://"))


def stored_web_validators(vector_db: BaseVectorDB, collection: str) -> dict[str, dict[str, str]]:
    """Each web page stored in `collection` with the validators its server sent (ETag,
    Last-Modified; empty when it sent none): what `load --refresh` fetches again, conditionally."""
    if not vector_db.has_collection(collection):
        return {}
    validators: dict[str, dict[str, str]] = {}
    for reference in vector_db.list_sources(collection):
        if not is_web_reference(reference):
            continue
        metadata = vector_db.source_metadata(collection, reference) or {}
        validators[reference] = {
            key: str(metadata[key]) for key in ("etag", "last_modified") if isinstance(metadata.get(key), str)
        }
    return validators
