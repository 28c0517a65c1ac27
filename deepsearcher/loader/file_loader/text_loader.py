"""Plain text files."""

from __future__ import annotations

import os
from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import make_document
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document


@register_provider("file_loader")
class TextLoader(BaseLoader):
    """One Document per .txt file (UTF-8; binary or undecodable files raise LoaderError)."""

    supported_file_types: ClassVar[list[str]] = ["txt"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        return [make_document(path, read_text(path), "txt")]
