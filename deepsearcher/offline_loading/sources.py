"""Turn what the user gave (files, folders) into one source at a time.

A file source is first an *entry*: its path, checked to be a regular file of a type some
loader reads, but not read yet. The pipeline decides from its content hash whether it
needs parsing at all (an unchanged file is not parsed again), then parses it within the
per-file budget (`parse_worker`). `iter_file_sources` still yields loaded sources, parsed
here, for callers that want documents at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from deepsearcher.loader.file_loader import _budget
from deepsearcher.loader.file_loader._records import MissingTextKeyError
from deepsearcher.loader.file_loader._text import not_regular_reason
from deepsearcher.loader.file_loader.base import BaseLoader, iter_files
from deepsearcher.offline_loading.file_hash import VANISHED, file_stamp, loader_signature
from deepsearcher.types import Document, LoaderError
from deepsearcher.utils.names import safe_reference


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
    #: The file to read, while the source is an entry not parsed yet.
    read_path: str | None = None
    #: Why the file is named as changed (it changed while it was read).
    changed: str | None = None
    #: sha256 of the bytes parsed, when the loader read them through `read_bytes`.
    file_sha256: str | None = None
    #: `file_hash.loader_signature` of the loader that parsed it.
    loader_signature: str | None = None
    #: The budget setting a refused file went past (`max_records`, ...).
    limit: str | None = None
    #: (size, mtime in ns) of the file when the load listed it: a file read later with
    #: another stamp changed during the load, and is named so.
    listed: tuple[int, int] | None = None
    #: Found in a folder (not named by the user): a JSON file that is not a corpus is skipped.
    in_folder: bool = False

    @property
    def pending(self) -> bool:
        return self.read_path is not None and not self.documents and self.error is None


def iter_file_entries(paths: Iterable[str | os.PathLike[str]], loader: BaseLoader) -> Iterator[LoadedSource]:
    """Each file named or found in a folder, as an entry (not read) or the reason it is skipped.

    References are absolute paths, so `docs/a.md` and `./docs/a.md` are one source.
    Inside a folder, files of an unsupported type are reported as unsupported (not
    failures: folders often hold images); a file named explicitly that we cannot read
    is a failure. Only regular files are read (symlinks followed): a FIFO, socket or
    device is skipped with its kind named, since reading one can block forever.
    """
    for given in paths:
        path = Path(given).absolute()
        reference = safe_reference(str(path))
        try:
            is_dir = path.is_dir()
            exists = is_dir or path.exists()
        except OSError as exc:  # a name too long, a loop of links: named, not a traceback
            yield LoadedSource(reference, error=f"cannot open: {exc.strerror or exc}")
            continue
        if is_dir:
            empty = True
            for file_path in iter_files(path):
                empty = False
                yield file_entry(loader, file_path, in_folder=True)
            if empty:
                yield LoadedSource(
                    reference,
                    skip_reason="empty folder: no files in it (hidden files are not loaded)",
                )
        elif (special := not_regular_reason(path)) is not None:
            yield LoadedSource(reference, skip_reason=special)
        elif not exists:
            yield LoadedSource(reference, error="no such file or directory")
        elif not loader.can_load(path):
            yield LoadedSource(reference, error=unsupported_reason(loader, path))
        else:
            yield _entry(reference, str(path))


def iter_file_sources(paths: Iterable[str | os.PathLike[str]], loader: BaseLoader) -> Iterator[LoadedSource]:
    """Like `iter_file_entries`, each file parsed here (one in memory at a time)."""
    for entry in iter_file_entries(paths, loader):
        yield parse_entry(loader, entry)


def unsupported_reason(loader: BaseLoader, path: Path) -> str:
    supported = ", ".join(f".{ext}" for ext in sorted(loader.supported_file_types))
    return f"unsupported file type '{path.suffix or '(none)'}' (supported: {supported})"


def file_entry(
    loader: BaseLoader, file_path: Path, read_path: Path | None = None, in_folder: bool = True
) -> LoadedSource:
    """One file found in a folder: skipped when not a regular file or unsupported, else an
    entry to read from `read_path` when given (e.g. the checked target of a symlink)."""
    special = not_regular_reason(file_path)
    reference = safe_reference(str(read_path or file_path))
    if special is not None:
        return LoadedSource(safe_reference(str(file_path)), skip_reason=special)
    if not loader.can_load(file_path):
        return LoadedSource(
            safe_reference(str(file_path)),
            unsupported=True,
            skip_reason=unsupported_reason(loader, file_path),
        )
    return _entry(reference, str(read_path or file_path), in_folder)


def _entry(reference: str, read_path: str, in_folder: bool = False) -> LoadedSource:
    try:
        listed: tuple[int, int] | None = file_stamp(os.stat(read_path))
    except OSError:
        listed = None  # gone already: reading it says so
    return LoadedSource(reference, read_path=read_path, listed=listed, in_folder=in_folder)


def folder_member(loader: BaseLoader, file_path: Path, read_path: Path | None = None) -> LoadedSource:
    """`file_entry`, parsed."""
    return parse_entry(loader, file_entry(loader, file_path, read_path))


def parse_entry(loader: BaseLoader, entry: LoadedSource) -> LoadedSource:
    """An entry's documents (in this thread, under the budget in force), or the entry itself
    when it is not one to parse (skipped, failed, already loaded)."""
    if not entry.pending:
        return entry
    return parse_file(loader, entry)


def load_one(loader: BaseLoader, read_path: str, reference: str, in_folder: bool = False) -> LoadedSource:
    """Call the loader on one file; every failure becomes the source's reason, never a raise."""
    try:
        documents = loader.load_file(read_path)
    except MissingTextKeyError as exc:
        if in_folder:
            return LoadedSource(reference, skip_reason=f"not loaded as a corpus: {exc.reason}")
        return LoadedSource(reference, error=exc.reason)
    except LoaderError as exc:
        return LoadedSource(reference, error=exc.reason, limit=getattr(exc, "limit", None))
    except FileNotFoundError:
        return LoadedSource(reference, error=VANISHED)
    except OSError as exc:
        return LoadedSource(reference, error=f"cannot read: {exc.strerror or exc}")
    except MemoryError:
        return LoadedSource(reference, error="ran out of memory while parsing", limit="max_parse_memory_mb")
    except RecursionError:
        return LoadedSource(reference, error="nested too deeply to parse (RecursionError)")
    except Exception as exc:  # a third-party or custom loader failed: report it, keep loading the rest
        return LoadedSource(reference, error=f"{type(exc).__name__}: {exc}")
    if reference != read_path:
        for document in documents:
            if document.metadata.get("reference") == read_path:
                document.metadata["reference"] = reference
    return LoadedSource(reference, documents=documents)


def parse_file(loader: BaseLoader, entry: LoadedSource) -> LoadedSource:
    """Parse one entry here under the budget in force; the outcome says what happened."""
    assert entry.read_path is not None
    read_path = entry.read_path
    noted = _budget.start_notes()
    source = load_one(loader, read_path, entry.reference, entry.in_folder)
    if source.error is not None and not os.path.lexists(read_path):
        source.error = VANISHED
    elif source.error is None:
        characters = sum(len(document.page_content) for document in source.documents)
        limit = _budget.current().max_text_chars
        if characters > limit:
            source = LoadedSource(
                entry.reference,
                error=f"{characters:,} characters of text, over {limit:,}; refused "
                "(raise load_settings.max_text_chars to load it)",
                limit="max_text_chars",
            )
    source.changed = noted.changed
    source.file_sha256 = noted.sha256
    source.loader_signature = loader_signature(loader)
    return source
