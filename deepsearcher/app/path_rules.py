"""Which local paths a client may ask DeepSearcher to load: the rules the load service (HTTP API
and MCP alike; `deepsearcher.server.paths` answers 403 / 400) applies.

Paths must lie under one of `server.allowed_roots` once resolved (symlinks followed);
a path containing `..` is refused outright; with no roots configured every path is
refused. Inside an allowed folder, a file whose symlink leads out of the roots is
reported as a failed source rather than read, and so is a file with more than one hard link
(its other name may lie outside the roots; the roots are checked by path). Only regular files
are read: a FIFO, socket or device is refused when named and skipped (with its kind) inside a folder.

This module needs no FastAPI (the `server` extra), so the MCP server applies the same
rules without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from deepsearcher.loader.file_loader._text import not_regular_reason
from deepsearcher.loader.file_loader.base import BaseLoader, iter_files
from deepsearcher.offline_loading.sources import (
    LoadedSource,
    file_entry,
    iter_file_entries,
    parse_entry,
)
from deepsearcher.types.errors import BadInputError

#: The longest path a client may name (Linux's PATH_MAX): resolving a longer one costs a system call
#: per component and, in the server, would hold a worker for minutes.
MAX_PATH_CHARS = 4096

NO_ROOTS = (
    "Loading local paths is disabled: list the folders clients may load from in server.allowed_roots "
    "of the config (http(s) URLs can always be loaded)."
)


class PathRefusedError(BadInputError):
    """A path a client asked to load is refused.

    `forbidden`: True when it names a place the client may not read (no roots
    configured, `..`, outside the roots); False when the path itself is malformed
    (empty, relative).
    """

    def __init__(self, message: str, forbidden: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.forbidden = forbidden
        self.http_status = 403 if forbidden else 400


def within(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_allowed(given: str, roots: list[Path], no_roots: str = NO_ROOTS) -> Path:
    """The resolved path of `given` when it lies under an allowed root, else PathRefusedError
    naming why (`no_roots`: the message when no roots are configured)."""
    if not roots:
        raise PathRefusedError(no_roots)
    if not given or not given.strip() or "\x00" in given:
        raise PathRefusedError("An empty path cannot be loaded.", forbidden=False)
    if len(given) > MAX_PATH_CHARS:
        raise PathRefusedError(
            f"Path {shown(given)} is longer than {MAX_PATH_CHARS} characters, the longest a path can be.",
            forbidden=False,
        )
    raw = Path(os.path.expanduser(given.strip()))
    if ".." in raw.parts or ".." in given.replace("\\", "/").split("/"):
        raise PathRefusedError(f"Path {shown(given)} contains '..': give the path without parent-directory steps.")
    if not raw.is_absolute():
        raise PathRefusedError(
            f"Path {shown(given)} is relative: give an absolute path under one of the allowed roots "
            f"({_listing(roots)}).",
            forbidden=False,
        )
    resolved = raw.resolve()
    if not within(resolved, roots):
        detail = f" (it leads to '{resolved}')" if resolved != raw else ""
        raise PathRefusedError(f"Path {shown(given)} is outside the allowed roots{detail}; allowed: {_listing(roots)}.")
    special = None if resolved.is_dir() else not_regular_reason(resolved) or hard_link_reason(resolved)
    if special is not None:  # folders are loaded recursively
        raise PathRefusedError(
            f"Path {shown(given)} is {special}; only regular files and folders can be loaded.",
            forbidden=False,
        )
    return resolved


def hard_link_reason(path: Path) -> str | None:
    """Why a regular file with other hard links is not read for a remote client, else None.

    A hard link inside an allowed root can be a second name of a file outside it (the roots are
    checked by path, and a hard link has no path of its own to check), so it is refused."""
    try:
        links = path.stat().st_nlink
    except OSError:
        return None  # the loader reports what cannot be opened
    if path.is_file() and links > 1:
        return f"a file with {links} hard links (one of its names may lie outside the allowed roots)"
    return None


def shown(text: str, limit: int = 200) -> str:
    """`text` quoted for a message, its middle cut when long: an error never echoes a megabyte back."""
    if len(text) <= limit:
        return f"'{text}'"
    return f"'{text[: limit // 2]}…{text[-limit // 4 :]}' ({len(text)} characters)"


def _listing(roots: list[Path]) -> str:
    return ", ".join(str(root) for root in roots)


def iter_allowed_file_sources(paths: Iterable[Path], loader: BaseLoader, roots: list[Path]) -> Iterator[LoadedSource]:
    """`iter_allowed_file_entries`, each file parsed here."""
    for entry in iter_allowed_file_entries(paths, loader, roots):
        yield parse_entry(loader, entry)


def iter_allowed_file_entries(paths: Iterable[Path], loader: BaseLoader, roots: list[Path]) -> Iterator[LoadedSource]:
    """Like `iter_file_entries`, but a file inside a folder whose real location is outside
    the roots (a symlink escaping them) is reported as failed instead of being read."""
    for path in paths:
        if not path.is_dir():
            yield from iter_file_entries([path], loader)
            continue
        for file_path in iter_files(path):
            real = file_path.resolve()
            linked = hard_link_reason(real)
            if not within(real, roots):
                yield LoadedSource(
                    str(file_path),
                    error=f"refused: it links to '{real}', outside the allowed roots",
                )
            elif linked is not None:
                yield LoadedSource(str(file_path), error=f"refused: it is {linked}")
            else:
                yield file_entry(loader, file_path, read_path=real)  # read what was checked
