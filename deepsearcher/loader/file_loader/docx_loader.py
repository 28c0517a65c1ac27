"""Word (.docx) files with python-docx: paragraphs and tables in document order, with the
path of "Heading N" paragraphs each part sits under (`loader.headings`)."""

from __future__ import annotations

import io
import os
import re
import zipfile
from typing import TYPE_CHECKING, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._budget import checked_archive
from deepsearcher.loader.file_loader._document import make_document
from deepsearcher.loader.file_loader._text import read_bytes
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.headings import SECTION_OFFSETS, HeadingPaths, clean_heading
from deepsearcher.types import Document, LoaderError

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from docx.table import Table
    from docx.text.paragraph import Paragraph


def _table_lines(table: Table) -> list[str]:
    """One line per row, cells joined by ' | '; merged cells (repeated by python-docx) once."""
    lines = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if text and (not cells or cells[-1] != text):
                cells.append(text)
        if cells:
            lines.append(" | ".join(cells))
    return lines


def _heading_level(paragraph: Paragraph) -> int:
    """1-9 for a paragraph styled "Heading N" (Word's built-in heading styles), else 0."""
    name = paragraph.style.name if paragraph.style is not None else ""
    match = _HEADING_STYLE.fullmatch(name or "")
    return int(match.group(1)) if match else 0


_HEADING_STYLE = re.compile(r"Heading ([1-9])")


def docx_text(document: DocxDocument) -> tuple[str, list[list[int | str]]]:
    """Body paragraphs and table rows in the order they appear (headers and footers left out),
    and [offset, heading path] where each heading paragraph starts."""
    from docx.table import Table

    lines: list[str] = []
    sections: list[list[int | str]] = []
    paths = HeadingPaths()
    offset = 0
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            added = _table_lines(block)
        elif block.text.strip():
            added = [block.text]
            if (level := _heading_level(block)) and (heading := clean_heading(block.text)):
                sections.append([offset, paths.enter(level, heading)])
        else:
            continue
        lines.extend(added)
        offset += sum(len(line) + 1 for line in added)  # each line and its "\n"
    return "\n".join(lines), sections


def docx_title(document: DocxDocument) -> str | None:
    """The core-properties title, else the first paragraph styled 'Title'."""
    title = (document.core_properties.title or "").strip()
    if title:
        return title
    for paragraph in document.paragraphs:
        if paragraph.style is not None and paragraph.style.name == "Title" and paragraph.text.strip():
            return paragraph.text.strip()
    return None


#: The first bytes of an OLE2 compound file: what Word writes for a password-protected document
#: (the encrypted package inside it) and for a Word 97-2003 .doc, neither of them a ZIP.
OLE_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")


def _ole_reason(data: bytes) -> str:
    if _ENCRYPTED_PACKAGE in data:
        return "encrypted DOCX (password-protected): remove the password in Word, save it, then load it again"
    return "not a DOCX but an old Word 97-2003 document (.doc) named .docx: save it as .docx in Word or LibreOffice"


@register_provider("file_loader")
class DocxLoader(BaseLoader):
    """One Document per .docx file."""

    supported_file_types: ClassVar[list[str]] = ["docx"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        import docx
        from docx.opc.exceptions import PackageNotFoundError

        path = os.fspath(file_path)
        data = read_bytes(path)
        if data.startswith(OLE_MAGIC):
            raise LoaderError(path, _ole_reason(data))
        data = checked_archive(path, data)  # a zip bomb is refused before python-docx inflates it
        try:
            document = docx.Document(io.BytesIO(data))
            text, sections = docx_text(document)
            title = docx_title(document)
        except (
            PackageNotFoundError,
            zipfile.BadZipFile,
            KeyError,
            ValueError,
            SyntaxError,
        ) as exc:
            # SyntaxError covers lxml's XMLSyntaxError for a damaged document part.
            raise LoaderError(path, f"corrupt DOCX: {exc or type(exc).__name__}") from exc
        except (AttributeError, TypeError) as exc:
            # python-docx met a part of the wrong kind (a main part that is not a w:document) and failed
            # inside itself; its message names lxml internals, not the file's problem
            raise LoaderError(
                path, "corrupt DOCX: its main part (word/document.xml) is not a Word document body"
            ) from exc
        if not text.strip():
            raise LoaderError(path, "no text in the document")
        return [make_document(path, text, "docx", title, **({SECTION_OFFSETS: sections} if sections else {}))]
