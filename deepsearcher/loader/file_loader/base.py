"""The file-loader contract."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path

from deepsearcher.types import Document


def iter_files(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Every regular file under `directory`, recursively, sorted, skipping hidden files and folders."""
    root = Path(directory)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(name for name in dirnames if not name.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                yield Path(dirpath) / name


class BaseLoader(ABC):
    """Loads one file type. `supported_file_types` lists extensions without the dot."""

    def __init__(self, **kwargs: object) -> None:  # noqa: B027 - a loader without settings keeps it
        """Upstream's base took (and ignored) keywords: subclasses call `super().__init__(**kwargs)`."""

    @property
    @abstractmethod
    def supported_file_types(self) -> list[str]:
        """File extensions (lower case, no dot) this loader reads."""

    @abstractmethod
    def load_file(self, file_path: str) -> list[Document]:
        """Documents of one file; raises LoaderError naming the file and the reason."""

    def can_load(self, file_path: str | os.PathLike[str]) -> bool:
        return Path(file_path).suffix.lower().lstrip(".") in self.supported_file_types

    def load_directory(self, directory: str) -> list[Document]:
        """Documents of every supported file under `directory` (recursive, hidden files skipped)."""
        documents: list[Document] = []
        for path in iter_files(directory):
            if self.can_load(path):
                documents.extend(self.load_file(str(path)))
        return documents
