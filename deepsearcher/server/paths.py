"""Which server-side paths and URLs a client may ask the server to load.

Paths must lie under one of `server.allowed_roots` once resolved (symlinks followed);
a path containing `..` is refused outright; with no roots configured every path is
refused. Inside an allowed folder, a file whose symlink leads out of the roots is
reported as a failed source rather than read. URLs must be http or https (the crawler
applies its own private-address rule on top).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator
from urllib.parse import urlsplit

from deepsearcher.loader.file_loader.base import BaseLoader, iter_files
from deepsearcher.offline_loading.sources import LoadedSource, iter_file_sources
from deepsearcher.server.errors import APIError

NO_ROOTS = "Loading server-side paths is disabled: list the folders clients may load from in server.allowed_roots in the config file (or upload the files to /v1/documents)."


def is_url_like(text: str) -> bool:
    return "://" in text


def check_url(url: str) -> str:
    """`url` when it is an http(s) URL with a host, else 400."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise APIError(400, f"Only http and https URLs can be loaded, got '{url}'.")
    if not parts.hostname:
        raise APIError(400, f"The URL '{url}' has no host name.")
    return url.strip()


def within(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_allowed(given: str, roots: list[Path]) -> Path:
    """The resolved path of `given` when it lies under an allowed root, else 403 naming why."""
    if not roots:
        raise APIError(403, NO_ROOTS)
    if not given or not given.strip() or "\x00" in given:
        raise APIError(400, "An empty path cannot be loaded.")
    raw = Path(os.path.expanduser(given.strip()))
    if ".." in raw.parts or ".." in given.replace("\\", "/").split("/"):
        raise APIError(403, f"Path '{given}' contains '..': give the path without parent-directory steps.")
    if not raw.is_absolute():
        raise APIError(400, f"Path '{given}' is relative: give an absolute path under one of the allowed roots ({_listing(roots)}).")
    resolved = raw.resolve()
    if not within(resolved, roots):
        detail = f" (it leads to '{resolved}')" if resolved != raw else ""
        raise APIError(403, f"Path '{given}' is outside the allowed roots{detail}; allowed: {_listing(roots)}.")
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
                yield LoadedSource(str(file_path), error=f"refused: it links to '{real}', outside the allowed roots")
            elif not loader.can_load(file_path):
                yield LoadedSource(str(file_path), unsupported=True)
            else:
                yield from iter_file_sources([real], loader)  # read what was checked
