"""Turn what the user gave (files, folders) into one loaded source at a time."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from deepsearcher.loader.file_loader._text import not_regular_reason
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
    is a failure. Only regular files are read (symlinks followed): a FIFO, socket or
    device is skipped with its kind named, since reading one can block forever.
    """
    for given in paths:
        path = Path(given).absolute()
        if path.is_dir():
            empty = True
            for file_path in iter_files(path):
                empty = False
                yield folder_member(loader, file_path)
            if empty:
                yield LoadedSource(
                    str(path),
                    skip_reason="empty folder: no files in it (hidden files are not loaded)",
                )
        elif (special := not_regular_reason(path)) is not None:
            yield LoadedSource(str(path), skip_reason=special)
        elif not path.exists():
            yield LoadedSource(str(path), error="no such file or directory")
        elif not loader.can_load(path):
            yield LoadedSource(str(path), error=unsupported_reason(loader, path))
        else:
            yield _load_one(loader, str(path))


def unsupported_reason(loader: BaseLoader, path: Path) -> str:
    supported = ", ".join(f".{ext}" for ext in sorted(loader.supported_file_types))
    return f"unsupported file type '{path.suffix or '(none)'}' (supported: {supported})"


def folder_member(loader: BaseLoader, file_path: Path, read_path: Path | None = None) -> LoadedSource:
    """One file found in a folder: skipped when not a regular file, unsupported, or loaded
    (from `read_path` when given, e.g. the checked target of a symlink)."""
    special = not_regular_reason(file_path)
    if special is not None:
        return LoadedSource(str(file_path), skip_reason=special)
    if not loader.can_load(file_path):
        return LoadedSource(
            str(file_path),
            unsupported=True,
            skip_reason=unsupported_reason(loader, file_path),
        )
    return _load_one(loader, str(read_path or file_path))


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
