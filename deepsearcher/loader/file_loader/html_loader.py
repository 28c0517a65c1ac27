"""HTML files: the main text only (trafilatura drops navigation, headers and footers), with
the h1-h6 heading path of each part (`loader.headings`)."""

from __future__ import annotations

import os
from html.parser import HTMLParser
from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import make_document
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.headings import SECTION_OFFSETS, html_headings, locate_headings
from deepsearcher.loader.noise import strip_permalinks
from deepsearcher.types import Document, LoaderError


class _TitleParser(HTMLParser):
    """Collects the text of the first <title> element."""

    def __init__(self) -> None:
        super().__init__()
        self._inside = False
        self._done = False
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self._done:
            self._inside = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._inside:
            self._inside = False
            self._done = True

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.parts.append(data)


def html_title(html: str) -> str | None:
    """The page's <title>, whitespace collapsed, or None."""
    parser = _TitleParser()
    parser.feed(html)
    parser.close()
    title = " ".join("".join(parser.parts).split())
    return title or None


def main_text(html: str) -> str | None:
    """The article text; a recall-oriented second pass catches pages too short for the first."""
    import trafilatura

    options: dict[str, Any] = {
        "include_comments": False,
        "include_tables": True,
        "include_links": False,
    }
    text = trafilatura.extract(html, **options) or trafilatura.extract(html, favor_recall=True, **options)
    return strip_permalinks(text) if text else text


@register_provider("file_loader")
class HTMLLoader(BaseLoader):
    """One Document per HTML file: main text, title from <title>."""

    supported_file_types: ClassVar[list[str]] = ["html", "htm"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        html = read_text(path)
        text = main_text(html)
        if not text or not text.strip():
            raise LoaderError(path, "no readable main text found in the HTML")
        sections = {SECTION_OFFSETS: located} if (located := locate_headings(text, html_headings(html))) else {}
        return [make_document(path, text, "html", html_title(html), **sections)]
