"""Splitting Documents into Chunks, each with the text around it (`wider_text`) for the LLM.

Each chunk's own start offset in the source is tracked, so `wider_text` is the window
around *that* occurrence even when the same text appears several times in a document
(locating chunks with `str.index` would always pick the first occurrence).

A Markdown chunk also gets `section`: the path of headings in force where it starts
("Install > On Linux"), which `Chunk.index_text` puts before the text for search and which
citations can show; loaders that know sections themselves (Docling, unstructured) keep theirs.
Loaders of other formats (HTML, DOCX, PDF) say where their headings fall (`loader.headings`).

`window_parts=True` (what the ingestion pipeline asks for) stores only the text around the
chunk, `wider_before` and `wider_after`, instead of a `wider_text` that repeats the chunk:
window-sized chunks made that copy most of a store's size. `RetrievalResult` joins the parts
back into `wider_text` when a search reads the row, so readers see the same metadata.
"""

from __future__ import annotations

import bisect
import copy
import logging
import re
from collections.abc import Iterable, Iterator

from deepsearcher.config.settings import DEFAULT_CHUNK_OVERLAP, DEFAULT_WINDOW_SIZE
from deepsearcher.loader.headings import SECTION_OFFSETS
from deepsearcher.types import Chunk, Document

__all__ = ["Chunk", "iter_chunks", "split_docs_to_chunks"]

logger = logging.getLogger(__name__)

_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
#: Documents whose text is Markdown (file_type as the loaders set it).
MARKDOWN_TYPES = frozenset({"md", "markdown"})


class SectionPaths:
    """The heading path in force at each offset of a Markdown text (ATX headings outside code fences)."""

    def __init__(self, text: str) -> None:
        self.offsets: list[int] = []
        self.paths: list[str] = []
        stack: list[tuple[int, str]] = []
        offset, in_fence = 0, False
        for line in text.splitlines(keepends=True):
            if _FENCE.match(line):
                in_fence = not in_fence
            elif not in_fence and (match := _ATX_HEADING.match(line.rstrip("\r\n"))) and match.group(2).strip():
                level = len(match.group(1))
                stack = [entry for entry in stack if entry[0] < level] + [(level, match.group(2).strip())]
                self.offsets.append(offset)
                self.paths.append(" > ".join(heading for _, heading in stack))
            offset += len(line)

    @classmethod
    def from_offsets(cls, located: Iterable[Iterable[object]]) -> SectionPaths:
        """From a loader's [[offset, path], ...] (`loader.headings.SECTION_OFFSETS`)."""
        sections = cls("")
        pairs = [(int(str(offset)), str(path)) for offset, path in located]
        for offset, path in sorted(pairs, key=lambda pair: pair[0]):  # stable: a later entry at one offset wins
            sections.offsets.append(offset)
            sections.paths.append(path)
        return sections

    def at(self, offset: int) -> str | None:
        index = bisect.bisect_right(self.offsets, offset) - 1
        return self.paths[index] if index >= 0 else None


def _validate(chunk_size: int, chunk_overlap: int, window_size: int) -> None:
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    if chunk_overlap < 0:
        raise ValueError(f"chunk_overlap must be zero or more, got {chunk_overlap}")
    if chunk_overlap >= chunk_size:
        raise ValueError(f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})")
    if window_size < 0:
        raise ValueError(f"window_size must be zero or more, got {window_size}")


def _pieces(text: str, chunk_size: int, chunk_overlap: int) -> Iterator[tuple[int, str]]:
    """(start offset, chunk text) pairs; a text that fits in one chunk is returned whole."""
    if len(text) <= chunk_size:
        yield 0, text
        return
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    previous_start, previous_end = -1, 0
    for piece in splitter.split_text(text):
        # A chunk starts after the previous one and at most `chunk_overlap` before its end,
        # so searching from there finds this chunk's own occurrence, not an earlier repeat.
        hint = max(previous_start + 1, previous_end - chunk_overlap, 0)
        start = text.find(piece, hint)
        if start < 0:
            raise ValueError(f"splitter returned text not found in the source after offset {hint}: {piece[:60]!r}")
        yield start, piece
        previous_start, previous_end = start, start + len(piece)


def iter_chunks(
    documents: Iterable[Document],
    chunk_size: int = 1500,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    window_size: int = DEFAULT_WINDOW_SIZE,
    window_parts: bool = False,
) -> Iterator[Chunk]:
    """Chunks of `documents`, lazily: metadata is a copy of the document's plus
    `wider_text` (window_size characters each side; with `window_parts`, only the sides, as
    `wider_before` / `wider_after`), `chunk_index` and `start_index`.

    Sizes are checked now, not at the first `next()`, so a bad config fails where it is given.
    """
    _validate(chunk_size, chunk_overlap, window_size)
    return _chunks(documents, chunk_size, chunk_overlap, window_size, window_parts)


def _chunks(
    documents: Iterable[Document], chunk_size: int, chunk_overlap: int, window_size: int, window_parts: bool
) -> Iterator[Chunk]:
    for document in documents:
        text = document.page_content
        if not text.strip():
            logger.warning(
                "%s: document has no text; nothing to chunk",
                document.reference or "<no reference>",
            )
            continue
        own = {key: value for key, value in document.metadata.items() if key != SECTION_OFFSETS}
        sections = _sections(document, text)
        for chunk_index, (start, piece) in enumerate(_pieces(text, chunk_size, chunk_overlap)):
            metadata = copy.deepcopy(own)
            if sections is not None and (section := sections.at(start + len(piece) - len(piece.lstrip()))):
                metadata["section"] = section
            end = start + len(piece)
            if window_parts:
                metadata["wider_before"] = text[max(0, start - window_size) : start]
                metadata["wider_after"] = text[end : end + window_size]
            else:
                metadata["wider_text"] = text[max(0, start - window_size) : end + window_size]
            metadata["chunk_index"] = chunk_index
            metadata["start_index"] = start
            yield Chunk(text=piece, reference=document.reference, metadata=metadata)


def _sections(document: Document, text: str) -> SectionPaths | None:
    """Where the document's headings fall: the loader's own list, else Markdown's marks."""
    if located := document.metadata.get(SECTION_OFFSETS):
        return SectionPaths.from_offsets(located)
    if _is_markdown(document.metadata) and "section" not in document.metadata:
        return SectionPaths(text)
    return None


def _is_markdown(metadata: dict) -> bool:
    """A Markdown file, or a web page a crawler kept as Markdown (HttpCrawler and Crawl4AI turn
    HTML into it, headings as "## ..." lines; they set content_type, not file_type)."""
    if "file_type" in metadata:
        return metadata["file_type"] in MARKDOWN_TYPES
    return metadata.get("content_type") in ("text/html", "text/markdown")


def split_docs_to_chunks(
    documents: Iterable[Document],
    chunk_size: int = 1500,
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
    window_size: int = DEFAULT_WINDOW_SIZE,
    window_parts: bool = False,
) -> list[Chunk]:
    """All chunks of `documents` as a list (DeepSearcher's signature, plus `window_size`)."""
    return list(iter_chunks(documents, chunk_size, chunk_overlap, window_size, window_parts))
