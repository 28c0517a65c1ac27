"""Turn what the user gave (files, folders) into one loaded source at a time."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from deepsearcher.loader.file_loader.base import BaseLoader, iter_files
from deepsearcher.types import Document, LoaderError


@dataclass
class LoadedSource:
    """One source's documents, or the reason it could not be read."""

    reference: str
    documents: list[Document] = field(default_factory=list)
    error: str | None = None
    unsupported: bool = False
    #: False for a failed link found while crawling: named in the summary, not a failed load.
    fatal: bool = True
    #: Why a discovered URL was deliberately not loaded (robots.txt, off-site, limits).
    skip_reason: str | None = None


def iter_file_sources(paths: Iterable[str | os.PathLike[str]], loader: BaseLoader) -> Iterator[LoadedSource]:
    """Load files one by one so memory holds a single source at a time.

    References are absolute paths, so `docs/a.md` and `./docs/a.md` are one source.
    Inside a folder, files of an unsupported type are reported as unsupported (not
    failures: folders often hold images); a file named explicitly that we cannot read
    is a failure.
    """
    for given in paths:
        path = Path(given).absolute()
        if path.is_dir():
            for file_path in iter_files(path):
                if loader.can_load(file_path):
                    yield _load_one(loader, str(file_path))
                else:
                    yield LoadedSource(str(file_path), unsupported=True)
        elif not path.exists():
            yield LoadedSource(str(path), error="no such file or directory")
        elif not loader.can_load(path):
            supported = ", ".join(f".{ext}" for ext in sorted(loader.supported_file_types))
            yield LoadedSource(str(path), error=f"unsupported file type '{path.suffix or '(none)'}' (supported: {supported})")
        else:
            yield _load_one(loader, str(path))


def _load_one(loader: BaseLoader, file_path: str) -> LoadedSource:
    try:
        documents = loader.load_file(file_path)
    except LoaderError as exc:
        return LoadedSource(file_path, error=exc.reason)
    except OSError as exc:
        return LoadedSource(file_path, error=f"cannot read: {exc.strerror or exc}")
    except Exception as exc:  # a third-party or custom loader failed: report it, keep loading the rest
        return LoadedSource(file_path, error=f"{type(exc).__name__}: {exc}")
    return LoadedSource(file_path, documents=documents)
