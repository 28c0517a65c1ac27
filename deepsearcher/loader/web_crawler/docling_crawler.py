"""Web pages (and PDFs behind URLs) through IBM's Docling, as Markdown with tables kept.

DeepSearcher's `DoclingCrawler`: Docling downloads each URL itself and rebuilds its
structure; the result is cut into Documents the same way DoclingLoader cuts files
(per page and heading-led section). It follows no links: each given URL is one source.
Docling fetches from this machine without the address checks of HttpCrawler, so a
server open to others should keep the default HttpCrawler for /load-website/.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader.docling_loader import docling_documents
from deepsearcher.loader.web_crawler._hosted import check_crawl_kwargs, for_each
from deepsearcher.loader.web_crawler.base import BaseCrawler, CrawlSink

if TYPE_CHECKING:
    from docling.document_converter import DocumentConverter

    from deepsearcher.types import Document


@register_provider("web_crawler", extra="docling", requires=("docling",))
class DoclingCrawler(BaseCrawler):
    """Config: max_connections (URLs converted at once, default 2: Docling is CPU-bound);
    other keyword options go to Docling's DocumentConverter."""

    def __init__(self, max_connections: int = 2, **converter_options: object) -> None:
        super().__init__()
        require("docling", extra="docling", feature="DoclingCrawler")
        self.max_connections = int(max_connections)
        self.converter_options = converter_options
        self._converter: DocumentConverter | None = None

    def _get_converter(self) -> DocumentConverter:
        if self._converter is None:
            from docling.document_converter import DocumentConverter

            self._converter = DocumentConverter(**self.converter_options)
        return self._converter

    def _convert(self, url: str) -> list[Document]:
        result = self._get_converter().convert(url)
        file_type = "pdf" if url.lower().split("?", 1)[0].endswith(".pdf") else "html"
        return docling_documents(url, result.document, file_type)

    async def _run(self, urls: list[str], sink: CrawlSink, **kwargs: object) -> None:
        check_crawl_kwargs(type(self).__name__, kwargs)

        async def one(url: str) -> None:
            try:
                documents = await asyncio.to_thread(self._convert, url)
            except Exception as exc:  # noqa: BLE001 - any Docling failure is this URL's failure, named
                reason = " ".join(str(exc).split()) or type(exc).__name__
                await sink.failure(url, f"Docling could not convert it: {reason[:300]}")
                return
            if documents:
                await sink.documents(documents)
            else:
                await sink.failure(url, "Docling found no text on the page")

        await for_each(urls, self.max_connections, one)
