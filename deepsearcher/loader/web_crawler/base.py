"""The web-crawler contract: URLs in, Documents out, and every failure named by URL.

Every crawler implements one coroutine, `_run(urls, sink, **options)`, that hands the
sink documents, failures and skipped URLs as it goes. From it the base class builds:

- `crawl_url(url)` / `crawl_urls(urls)` → list[Document] (DeepSearcher's API); each
  failure is logged as a warning and the full report is kept in `self.last_report`;
- `crawl(urls)` / `acrawl(urls)` → CrawlReport (documents, failures, skipped, stats);
- `stream(urls)` / `astream(urls)` → Document, CrawlFailure and CrawlSkip items as they
  happen, without keeping documents in memory (for ingestion pipelines).

The sync methods work inside a running event loop too (they then run on a private loop
in a helper thread).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from deepsearcher.loader.web_crawler._errors import URLRefusedError
from deepsearcher.loader.web_crawler._urls import normalize_url, url_key
from deepsearcher.types import Document
from deepsearcher.types.json import JSONObject
from deepsearcher.utils.contracts import ContractMeta, overrides
from deepsearcher.utils.sync_bridge import iterate_isolated, run_isolated

logger = logging.getLogger(__name__)


class CrawlFailure(NamedTuple):
    """A URL that was asked for or followed but gave no document, and why."""

    url: str
    reason: str


class CrawlSkip(NamedTuple):
    """A discovered URL deliberately not fetched (off-site, excluded, robots.txt, limits, duplicate)."""

    url: str
    reason: str


CrawlEvent = Document | CrawlFailure | CrawlSkip


@dataclass
class CrawlStats:
    """Counters of one crawl."""

    start_urls: int = 0
    pages_fetched: int = 0  # page requests that got an HTTP response (any status)
    documents: int = 0
    failures: int = 0
    skipped: int = 0
    requests: int = 0  # every HTTP request: pages, redirect hops, robots.txt, sitemaps, API calls
    bytes_received: int = 0
    elapsed_s: float = 0.0

    def as_dict(self) -> JSONObject:
        return asdict(self)


@dataclass
class CrawlReport:
    """What one crawl produced: documents, and every URL that failed or was skipped, with why."""

    documents: list[Document] = field(default_factory=list)
    failures: list[CrawlFailure] = field(default_factory=list)
    skipped: list[CrawlSkip] = field(default_factory=list)
    stats: CrawlStats = field(default_factory=CrawlStats)

    @property
    def ok(self) -> bool:
        """True when no URL failed (skipped URLs are not failures)."""
        return not self.failures

    def failure_for(self, url: str) -> str | None:
        """The reason `url` failed (compared after normalisation), or None."""
        key = _safe_key(url)
        for failure in self.failures:
            if failure.url == url or _safe_key(failure.url) == key:
                return failure.reason
        return None

    def summary(self) -> str:
        s = self.stats
        return (
            f"{s.documents} document(s) from {s.pages_fetched} page(s), {s.failures} failure(s), "
            f"{s.skipped} skipped, {s.requests} request(s), {s.bytes_received} bytes in {s.elapsed_s:.2f} s"
        )


def _safe_key(url: str) -> str:
    try:
        return url_key(url)
    except URLRefusedError:
        return url


class CrawlSink:
    """Where a crawler hands its results; fills a CrawlReport and, when streaming, a queue."""

    def __init__(
        self,
        report: CrawlReport,
        queue: asyncio.Queue[CrawlEvent] | None = None,
        keep_documents: bool = True,
    ) -> None:
        self.report = report
        self.stats = report.stats
        self._queue = queue
        self._keep_documents = keep_documents
        self._lock = asyncio.Lock()  # the documents of one page reach the stream together

    async def _emit(self, items: Sequence[CrawlEvent]) -> None:
        if self._queue is not None:
            async with self._lock:
                for item in items:
                    await self._queue.put(item)

    async def documents(self, documents: list[Document]) -> None:
        """The documents of one page (a PDF's pages): streamed one after another, nothing in between."""
        self.stats.documents += len(documents)
        if self._keep_documents:
            self.report.documents.extend(documents)
        await self._emit(list(documents))

    async def document(self, document: Document) -> None:
        await self.documents([document])

    async def failure(self, url: str, reason: str) -> None:
        item = CrawlFailure(url, reason)
        self.stats.failures += 1
        self.report.failures.append(item)
        await self._emit([item])

    async def skip(self, url: str, reason: str) -> None:
        item = CrawlSkip(url, reason)
        self.stats.skipped += 1
        self.report.skipped.append(item)
        await self._emit([item])


class BaseCrawler(metaclass=ContractMeta):
    """Base of every web crawler. Subclasses implement `_run`, or, written against
    upstream's base, the sync `crawl_url(url, **kwargs) -> list[Document]` alone (it then
    runs in a worker thread, one start URL after another, an exception being that URL's failure)."""

    #: Also a class attribute: upstream-shaped crawlers may skip `super().__init__()`.
    last_report: CrawlReport | None = None

    def __init__(self, **kwargs: object) -> None:
        self.last_report = None

    @classmethod
    def __missing_methods__(cls) -> set[str]:
        if overrides(cls, cls._contract_base, "_run") or overrides(cls, cls._contract_base, "crawl_url"):
            return set()
        return {"_run"}

    # -- what a crawler implements ------------------------------------------------------

    async def _run(self, urls: list[str], sink: CrawlSink, **kwargs: object) -> None:
        """Crawl the (valid, de-duplicated, normalised) start `urls`, reporting into `sink`.

        The default runs an upstream-shaped crawler's own `crawl_url` for each URL."""
        for url in urls:
            try:
                documents = await asyncio.to_thread(self.crawl_url, url, **kwargs)
            except Exception as exc:  # noqa: BLE001 - that URL's failure, reported by name; the others go on
                await sink.failure(url, f"{type(exc).__name__}: {exc}")
                continue
            sink.stats.pages_fetched += 1
            await sink.documents(list(documents or []))

    # -- async API ------------------------------------------------------------------------

    async def astream(
        self, urls: str | Iterable[str], *, keep_documents: bool = False, **kwargs: object
    ) -> AsyncIterator[CrawlEvent]:
        """Documents, failures and skips as they happen; `self.last_report` is set at the end.

        The report keeps failures, skips and stats; documents only with keep_documents=True.
        """
        report = CrawlReport()
        queue: asyncio.Queue[CrawlEvent] = asyncio.Queue(maxsize=32)
        task = asyncio.ensure_future(
            self._crawl_into(urls, CrawlSink(report, queue, keep_documents=keep_documents), kwargs)
        )
        try:
            while True:
                if task.done() and queue.empty():
                    break
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                else:
                    getter.cancel()
            task.result()  # re-raise what the crawl raised (configuration errors)
        finally:
            if not task.done():  # the consumer stopped early: stop the crawl and wait until it has
                task.cancel()
                await asyncio.wait({task})
                if not task.cancelled() and task.exception() is not None:
                    logger.debug(
                        "%s: the crawl failed while stopping early: %r",
                        type(self).__name__,
                        task.exception(),
                    )
            self.last_report = report

    async def acrawl(self, urls: str | Iterable[str], **kwargs: object) -> CrawlReport:
        """Crawl and return the full report (documents, failures, skipped, stats)."""
        report = CrawlReport()
        try:
            await self._crawl_into(urls, CrawlSink(report), kwargs)
        finally:
            self.last_report = report
        return report

    # -- sync API -------------------------------------------------------------------------

    def crawl(self, urls: str | Iterable[str], **kwargs: object) -> CrawlReport:
        """Sync `acrawl`: the full report. Works inside a running event loop too."""
        report = run_isolated(lambda: self.acrawl(urls, **kwargs))
        self.last_report = report
        return report

    def stream(
        self, urls: str | Iterable[str], *, keep_documents: bool = False, **kwargs: object
    ) -> Iterator[CrawlEvent]:
        """Sync `astream`: items as they are crawled (the crawl runs on a private loop thread)."""
        yield from iterate_isolated(lambda: self.astream(urls, keep_documents=keep_documents, **kwargs))

    def crawl_urls(self, urls: list[str], **crawl_kwargs: object) -> list[Document]:
        """Documents of every URL; failures are logged one warning each and kept in `last_report`."""
        report = self.crawl(urls, **crawl_kwargs)
        for failure in report.failures:
            logger.warning("Could not crawl %s: %s", failure.url, failure.reason)
        if report.failures:
            logger.warning("%s: %s", type(self).__name__, report.summary())
        return report.documents

    def crawl_url(self, url: str, **crawl_kwargs: object) -> list[Document]:
        """Documents of one URL (more than one when following links or for a multi-page PDF)."""
        return self.crawl_urls([url], **crawl_kwargs)

    # -- helpers ----------------------------------------------------------------------------

    async def _crawl_into(self, urls: str | Iterable[str], sink: CrawlSink, kwargs: dict[str, Any]) -> None:
        """Check the start URLs and crawl them into `sink`, timing the whole."""
        started = time.monotonic()
        try:
            start = await self._prepare(urls, sink)
            if start:
                await self._run(start, sink, **kwargs)
        finally:
            sink.stats.elapsed_s = time.monotonic() - started

    async def _prepare(self, urls: str | Iterable[str], sink: CrawlSink) -> list[str]:
        """Normalise the start URLs; refuse non-http(s) ones and drop repeats."""
        if isinstance(urls, str):
            urls = [urls]
        start: list[str] = []
        seen: set[str] = set()
        for url in urls:
            sink.stats.start_urls += 1
            try:
                normal = normalize_url(str(url))
                key = url_key(normal)
            except URLRefusedError as exc:
                await sink.failure(str(url), exc.reason)
                continue
            if key not in seen:
                seen.add(key)
                start.append(normal)
        return start
