"""Which local paths a client may ask DeepSearcher to load: the rules the load service (HTTP API
and MCP alike; `deepsearcher.server.paths` answers 403 / 400) applies.

Paths must lie under one of `server.allowed_roots` once resolved (symlinks followed);
a path containing `..` is refused outright; with no roots configured every path is
refused. Inside an allowed folder, a file whose symlink leads out of the roots is
reported as a failed source rather than read. Only regular files are read: a FIFO,
socket or device is refused when named and skipped (with its kind) inside a folder.

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
    folder_member,
    iter_file_sources,
)
from deepsearcher.types.errors import BadInputError

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
    raw = Path(os.path.expanduser(given.strip()))
    if ".." in raw.parts or ".." in given.replace("\\", "/").split("/"):
        raise PathRefusedError(f"Path '{given}' contains '..': give the path without parent-directory steps.")
    if not raw.is_absolute():
        raise PathRefusedError(
            f"Path '{given}' is relative: give an absolute path under one of the allowed roots ({_listing(roots)}).",
            forbidden=False,
        )
    resolved = raw.resolve()
    if not within(resolved, roots):
        detail = f" (it leads to '{resolved}')" if resolved != raw else ""
        raise PathRefusedError(f"Path '{given}' is outside the allowed roots{detail}; allowed: {_listing(roots)}.")
    special = None if resolved.is_dir() else not_regular_reason(resolved)  # folders are loaded recursively
    if special is not None:
        raise PathRefusedError(
            f"Path '{given}' is {special}; only regular files and folders can be loaded.",
            forbidden=False,
        )
    return resolved


def _listing(roots: list[Path]) -> str:
    return ", ".join(str(root) for root in roots)


def iter_allowed_file_sources(paths: Iterable[Path], loader: BaseLoader, roots: list[Path]) -> Iterator[LoadedSource]:
    """Like `iter_file_sources`, but a file inside a folder whose real location is outside
    the roots (a symlink escaping them) is reported as failed instead of being read."""
    for path in paths:
        if not path.is_dir():
            yield from iter_file_sources([path], loader)
            continue
        for file_path in iter_files(path):
            real = file_path.resolve()
            if not within(real, roots):
                yield LoadedSource(
                    str(file_path),
                    error=f"refused: it links to '{real}', outside the allowed roots",
                )
            else:
                yield folder_member(loader, file_path, read_path=real)  # read what was checked
