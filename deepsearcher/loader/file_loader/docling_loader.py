"""PDF, Word, PowerPoint, Excel and HTML through IBM's Docling, as Markdown with tables kept.

Docling rebuilds the document's structure (headings, lists, tables) and exports Markdown,
so a table stays a table ("| Year | Amount |") instead of a run of cell texts. The
Markdown is cut into one Document per page (where the format has pages, e.g. PDF) and
heading-led section, with `page` and `section` metadata for citations.

DOCX, PPTX, XLSX, HTML and Markdown convert without any model. PDFs go through Docling's
layout models, which it downloads from the Hugging Face hub on first use: offline, the
models must already be in its cache (or in `artifacts_path`).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, ClassVar

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import checked_file, make_document
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document, LoaderError
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from docling.document_converter import DocumentConverter
    from docling_core.types.doc import DoclingDocument

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_sections(markdown: str, carried: str | None = None) -> list[tuple[str | None, str]]:
    """(heading, text) runs of Markdown, each starting at a heading (the heading line stays in
    the text). Text before the first heading belongs to `carried`, the section a previous
    page ended in. Headings inside fenced code blocks do not count."""
    sections: list[tuple[str | None, list[str]]] = [(carried, [])]
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match:
            sections.append((match.group(2).strip(), [line]))
        else:
            sections[-1][1].append(line)
    merged: list[tuple[str | None, str]] = []
    pending = ""  # headings with no text of their own ("# Report" right before "## Revenue")
    for heading, lines in sections:
        text = "\n".join(lines).strip()
        if not text:
            continue
        if all(_HEADING.match(line) or not line.strip() for line in lines):
            pending = f"{pending}\n\n{text}".strip()
            continue
        merged.append((heading, f"{pending}\n\n{text}".strip() if pending else text))
        pending = ""
    if pending:
        merged.append((_HEADING.match(pending.splitlines()[-1]).group(2).strip(), pending))  # type: ignore[union-attr]
    return merged


def first_title(markdown: str) -> str | None:
    """The first level-1 heading, else the first heading of any level."""
    headings = [(len(m.group(1)), m.group(2).strip()) for m in map(_HEADING.match, markdown.splitlines()) if m]
    for level, text in headings:
        if level == 1:
            return text
    return headings[0][1] if headings else None


def _export(document: DoclingDocument, **kwargs: object) -> str:
    """Markdown without backslash-escaped underscores (they would end up in every chunk)."""
    try:
        return document.export_to_markdown(escape_underscores=False, **kwargs)
    except TypeError:  # an older docling-core without that option
        return document.export_to_markdown(**kwargs)


@register_provider("file_loader", extra="docling", requires=("docling",))
class DoclingLoader(BaseLoader):
    """Docling conversion to Markdown (tables kept), one Document per page and section.

    Config: artifacts_path (a folder with Docling's models, for PDFs offline);
    other keyword options go to Docling's DocumentConverter.
    """

    supported_file_types: ClassVar[list[str]] = [
        "pdf",
        "docx",
        "pptx",
        "xlsx",
        "html",
        "htm",
        "md",
    ]

    def __init__(self, artifacts_path: str | None = None, **converter_options: object) -> None:
        require("docling", extra="docling", feature="DoclingLoader")
        self.artifacts_path = artifacts_path
        self.converter_options = converter_options
        self._converter: DocumentConverter | None = None

    def _get_converter(self) -> DocumentConverter:
        if self._converter is None:
            from docling.document_converter import DocumentConverter

            options = dict(self.converter_options)
            if self.artifacts_path:
                from docling.datamodel.base_models import InputFormat
                from docling.datamodel.pipeline_options import PdfPipelineOptions
                from docling.document_converter import PdfFormatOption

                pdf = PdfFormatOption(pipeline_options=PdfPipelineOptions(artifacts_path=self.artifacts_path))
                options.setdefault("format_options", {InputFormat.PDF: pdf})
            self._converter = DocumentConverter(**options)
        return self._converter

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path, ext = checked_file(file_path, self.supported_file_types)
        try:
            result = self._get_converter().convert(path)
        except Exception as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            hint = (
                " (PDFs need Docling's layout models: run once online, or set artifacts_path)" if ext == "pdf" else ""
            )
            raise LoaderError(path, f"Docling could not convert it: {reason[:300]}{hint}") from exc
        documents = docling_documents(path, result.document, ext)
        if not documents:
            raise LoaderError(path, "Docling found no text in the file")
        return documents


def docling_documents(path: str, document: object, file_type: str) -> list[Document]:
    """Documents of a converted DoclingDocument: per page when it has pages, per section always."""
    pages = sorted(getattr(document, "pages", None) or {})
    if pages:
        exports = [(page, _export(document, page_no=page)) for page in pages]
    else:
        exports = [(None, _export(document))]
    title = next((t for t in (first_title(markdown) for _, markdown in exports) if t), None)
    documents: list[Document] = []
    section: str | None = None
    for page, markdown in exports:
        for heading, text in markdown_sections(markdown, carried=section):
            section = heading
            extra: JSONObject = {"format": "markdown"}
            if page is not None:
                extra["page"] = page
                extra["page_count"] = len(pages)
            if heading:
                extra["section"] = heading
            documents.append(make_document(path, text, file_type, title, **extra))
    return documents
