"""Markdown files; the first heading becomes the title so it can be indexed with every chunk."""

from __future__ import annotations

import os
import re
from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import make_document
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document

_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _body_lines(text: str) -> list[str]:
    """Lines after an optional YAML front-matter block (whose '---' is not a heading underline)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() in ("---", "..."):
                return lines[index + 1 :]
    return lines


def first_heading(text: str) -> str | None:
    """The text of the first ATX (`# Title`) or setext (`Title` over `===`) heading outside code fences."""
    in_fence = False
    previous = ""
    for line in _body_lines(text):
        if _FENCE.match(line):
            in_fence = not in_fence
            previous = ""
            continue
        if in_fence:
            continue
        atx = _ATX.match(line)
        if atx and atx.group(1).strip():
            return atx.group(1).strip()
        if previous.strip() and _SETEXT_UNDERLINE.match(line):
            return previous.strip()
        previous = line
    return None


@register_provider("file_loader")
class MarkdownLoader(BaseLoader):
    """One Document per Markdown file, text kept as written, title from its first heading."""

    supported_file_types: ClassVar[list[str]] = ["md", "markdown"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        text = read_text(path)
        return [make_document(path, text, "md", first_heading(text))]
