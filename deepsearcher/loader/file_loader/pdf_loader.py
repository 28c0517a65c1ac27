"""PDF files with pypdf: one Document per page so answers can cite the page."""

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
            pages = [page.extract_text() or "" for page in reader.pages]
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
        documents = [
            make_document(path, text, "pdf", title, page=number, page_count=len(pages))
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
