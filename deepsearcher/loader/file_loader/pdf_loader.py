"""PDF files with pypdf: one Document per page so answers can cite the page.

Running headers and footers (lines most pages repeat at their edges, page numbers) are removed
(`loader.noise.strip_running_lines`); where the PDF has an outline (bookmarks), each part of a
page gets the path of the entries it sits under as its `section` (`loader.headings`).
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import (
    extension,
    make_document,
    unsupported,
)
from deepsearcher.loader.file_loader._text import read_bytes
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.file_loader.markdown_loader import MarkdownLoader
from deepsearcher.loader.file_loader.text_loader import TextLoader
from deepsearcher.loader.headings import SECTION_OFFSETS, HeadingPaths, clean_heading
from deepsearcher.loader.noise import strip_running_lines
from deepsearcher.types import Document, LoaderError

if TYPE_CHECKING:
    from pypdf import PdfReader


@register_provider("file_loader")
class PDFLoader(BaseLoader):
    """PDF pages with `page` (1-based) metadata; title from the PDF's document info.

    The original DeepSearcher's PDFLoader also read .md and .txt, so configs naming it
    keep working: those files are handed to MarkdownLoader and TextLoader.
    """

    def __init__(self) -> None:
        self._delegates: dict[str, BaseLoader] = {
            "md": MarkdownLoader(),
            "txt": TextLoader(),
        }

    supported_file_types: ClassVar[list[str]] = ["pdf", "md", "txt"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        ext = extension(path)
        if ext in self._delegates:
            return self._delegates[ext].load_file(path)
        if ext != "pdf":
            raise unsupported(path, self.supported_file_types)
        return self._load_pdf(path)

    def _load_pdf(self, path: str) -> list[Document]:
        from pypdf import PdfReader
        from pypdf.errors import FileNotDecryptedError, PyPdfError

        data = read_bytes(path)
        if b"%PDF-" not in data[:1024]:  # the spec allows junk before the header, within 1 KiB
            raise LoaderError(path, "corrupt PDF: not a PDF (no %PDF- header)")
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise LoaderError(path, "encrypted PDF: a password is required")
            title = _pdf_title(reader)
            pages = strip_running_lines([page.extract_text() or "" for page in reader.pages])
            outline = _outline_entries(reader)
        except FileNotDecryptedError as exc:
            raise LoaderError(path, "encrypted PDF: a password is required") from exc
        except (
            PyPdfError,
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            IndexError,
        ) as exc:
            raise LoaderError(path, f"corrupt PDF: {exc}") from exc
        sections = _page_sections(pages, outline)
        documents = [
            make_document(path, text, "pdf", title, page=number, page_count=len(pages), **sections[number - 1])
            for number, text in enumerate(pages, start=1)
            if text.strip()  # blank pages (separators, figures) have nothing to index
        ]
        if not documents:
            raise LoaderError(
                path,
                "no extractable text in PDF (scanned images? OCR is not supported)",
            )
        return documents


# Titles PDF producers write when the author gave none; indexing them would only add noise.
_PLACEHOLDER_TITLES = frozenset({"untitled", "untitled document", "no title"})


def _pdf_title(reader: PdfReader) -> str | None:
    """The document-info title, unless it is blank or a producer's placeholder."""
    info = reader.metadata
    title = str(info.title or "").strip() if info is not None else ""
    return title if title and title.lower() not in _PLACEHOLDER_TITLES else None


def _outline_entries(reader: PdfReader) -> list[tuple[int, int, str]]:
    """(0-based page, level, title) of the PDF's outline entries, in outline order."""
    entries: list[tuple[int, int, str]] = []

    def walk(items: list, level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            page = reader.get_destination_page_number(item)
            title = clean_heading(str(getattr(item, "title", "") or ""))
            if title and page is not None and page >= 0:
                entries.append((page, level, title))

    walk(list(reader.outline or []), 1)
    return entries


def _page_sections(pages: list[str], outline: list[tuple[int, int, str]]) -> list[dict[str, list]]:
    """For each page, the Document metadata that places its outline entries: the path in force
    where the page starts, then each entry pointing to the page at the line that shows its
    title (or the page's top when no line does)."""
    paths = HeadingPaths()
    result: list[dict[str, list]] = []
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page, level, title in outline:
        by_page.setdefault(page, []).append((level, title))
    for number, text in enumerate(pages):
        located: list[list[int | str]] = [[0, paths.path]] if paths.path else []
        searched_from = 0
        for level, title in by_page.get(number, []):
            found = text.find(title, searched_from)
            offset = searched_from if found < 0 else text.rfind("\n", 0, found) + 1
            searched_from = max(searched_from, found + len(title)) if found >= 0 else searched_from
            located.append([offset, paths.enter(level, title)])
        result.append({SECTION_OFFSETS: located} if located else {})
    return result
