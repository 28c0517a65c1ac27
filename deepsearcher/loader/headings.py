"""Heading paths for formats whose headings are not in the text as Markdown marks.

A loader that knows where headings fall in its text (HTML h1-h6, DOCX "Heading N" styles,
PDF outline entries) puts them in the Document's metadata under `SECTION_OFFSETS`: a list
of [offset, "Part > Chapter > Section"] in text order. The splitter gives each chunk the
path in force where it starts as `section` (and does not copy the list into the chunks);
`Chunk.index_text` puts it before the text, so a chunk is found by its section's words.
"""

from __future__ import annotations

import bisect
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
    """Collects (level, text, the text that follows) of every h1-h6 element in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str, str]] = []
        self._level = 0
        self._parts: list[str] = []
        self._after: list[str] = []  # text after the last heading, until it is long enough

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HEADING_TAGS:
            self._close_anchor()
            self._level, self._parts = _HEADING_TAGS[tag], []

    def handle_endtag(self, tag: str) -> None:
        if tag in _HEADING_TAGS and self._level:
            if heading := clean_heading("".join(self._parts)):
                self.headings.append((self._level, heading, ""))
                self._after = []
            self._level = 0

    def handle_data(self, data: str) -> None:
        if self._level:
            self._parts.append(data)
        elif self.headings and not self.headings[-1][2]:
            self._after.append(data)
            if len(clean_heading("".join(self._after))) >= ANCHOR_CHARS:
                self._close_anchor()

    def _close_anchor(self) -> None:
        if self.headings and not self.headings[-1][2] and self._after:
            level, heading, _ = self.headings[-1]
            self.headings[-1] = (level, heading, clean_heading("".join(self._after))[:ANCHOR_CHARS])
        self._after = []

    def close(self) -> None:
        super().close()
        self._close_anchor()


#: Characters of the text after a heading used to place it when the extracted text left the
#: heading itself out (trafilatura drops some, e.g. texinfo's chapter headings).
ANCHOR_CHARS = 40


def html_headings(html: str) -> list[tuple[int, str, str]]:
    """(level, heading text, the first words after it) of the page's h1-h6 headings, in order."""
    parser = _HeadingParser()
    parser.feed(html)
    parser.close()
    return parser.headings


def locate_headings(text: str, headings: Iterable[tuple[int, str, str]]) -> list[list[int | str]]:
    """[offset, path] for each heading placed in `text`, in order: at a line that is the
    heading, else at the line where the words that follow it in the page start (when at least
    `ANCHOR_CHARS` long). A heading found neither way (navigation, a dropped chapter title) gets
    no entry of its own but stays in the path of the headings under it."""
    lines: list[tuple[int, str]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        lines.append((offset, clean_heading(line)))
        offset += len(line)
    flat = re.sub(r"\s", " ", text)  # one space per whitespace character: offsets carry over
    paths = HeadingPaths()
    located: list[list[int | str]] = []
    line_index = 0
    for level, heading, anchor in headings:
        found = next((i for i in range(line_index, len(lines)) if lines[i][1] == heading), None)
        if found is None and len(anchor) >= ANCHOR_CHARS:
            at = flat.find(anchor, lines[line_index][0] if line_index < len(lines) else len(flat))
            if at >= 0:
                found = bisect.bisect_right([start for start, _ in lines], at) - 1
        path = paths.enter(level, heading)  # a heading not placed still opens its part of the path
        if found is not None:
            located.append([lines[found][0], path])
            line_index = found
    return located
