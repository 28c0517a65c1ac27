"""Heading paths for formats whose headings are not in the text as Markdown marks.

A loader that knows where headings fall in its text (HTML h1-h6, DOCX "Heading N" styles,
PDF outline entries) puts them in the Document's metadata under `SECTION_OFFSETS`: a list
of [offset, "Part > Chapter > Section"] in text order. The splitter gives each chunk the
path in force where it starts as `section` (and does not copy the list into the chunks);
`Chunk.index_text` puts it before the text, so a chunk is found by its section's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

#: Document metadata key: [[offset, heading path], ...]; read by loader/splitter.py.
SECTION_OFFSETS = "section_offsets"

_HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}
_SPACE = re.compile(r"\s+")


def clean_heading(text: str) -> str:
    """A heading as a path part: whitespace collapsed, permalink signs dropped."""
    return _SPACE.sub(" ", text.replace("¶", "")).strip()


class HeadingPaths:
    """Builds heading paths from (level, heading) pairs met in text order."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    def enter(self, level: int, heading: str) -> str:
        """The path after a heading of `level` (1 = top) is met."""
        self._stack = [entry for entry in self._stack if entry[0] < level] + [(level, heading)]
        return self.path

    @property
    def path(self) -> str:
        return " > ".join(heading for _, heading in self._stack)


class _HeadingParser(HTMLParser):
    """Collects (level, text) of every h1-h6 element in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self._level = 0
        self._parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HEADING_TAGS:
            self._level, self._parts = _HEADING_TAGS[tag], []

    def handle_endtag(self, tag: str) -> None:
        if tag in _HEADING_TAGS and self._level:
            if heading := clean_heading("".join(self._parts)):
                self.headings.append((self._level, heading))
            self._level = 0

    def handle_data(self, data: str) -> None:
        if self._level:
            self._parts.append(data)


def html_headings(html: str) -> list[tuple[int, str]]:
    """(level, text) of the page's h1-h6 headings, in order."""
    parser = _HeadingParser()
    parser.feed(html)
    parser.close()
    return parser.headings


#: Headings looked ahead for a line: an extractor drops some (navigation, sidebars), not many in a row.
_LOOKAHEAD = 8


def locate_headings(text: str, headings: Iterable[tuple[int, str]]) -> list[list[int | str]]:
    """[offset, path] for each heading found as a line of `text`, in order (headings the
    extracted text left out are skipped)."""
    pending = list(headings)
    paths = HeadingPaths()
    located: list[list[int | str]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        cleaned = clean_heading(line)
        if cleaned and pending:
            for index, (level, heading) in enumerate(pending[:_LOOKAHEAD]):
                if heading == cleaned:
                    located.append([offset, paths.enter(level, heading)])
                    del pending[: index + 1]
                    break
        offset += len(line)
    return located
