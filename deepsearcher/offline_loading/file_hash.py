"""A file's fingerprint from its bytes, taken before it is parsed: the re-load fast path.

Hashing is far cheaper than parsing (a few hundred files of documentation hash in well
under a second; parsing their PDFs and HTML takes a minute), so a file whose bytes and
parse settings are those stored is known unchanged without being parsed or split.
The settings are in the fingerprint so that a new chunk size or `text_key` re-loads.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

from deepsearcher.loader.file_loader._budget import ParseBudget

_BLOCK = 1024 * 1024
VANISHED = "vanished during the load: it was listed when the load started and was gone when it was read"


def file_stamp(stat_result: os.stat_result) -> tuple[int, int]:
    """(size, mtime in ns): what tells that a file changed since it was listed."""
    return stat_result.st_size, stat_result.st_mtime_ns


@dataclass(frozen=True)
class Hashed:
    sha256: str = ""
    error: str | None = None
    limit: str | None = None
    #: (size, mtime in ns) when it was opened for hashing.
    stamp: tuple[int, int] | None = None


def hash_file(reference: str, read_path: str, budget: ParseBudget | None = None) -> Hashed:
    """sha256 of the bytes the file holds when opened (a growing file is not followed);
    an error names a file that vanished, cannot be opened or is over max_file_bytes."""
    limit = (budget or ParseBudget()).max_file_bytes
    try:
        descriptor = os.open(read_path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return Hashed(error=VANISHED)
    except OSError as exc:
        return Hashed(error=f"cannot open: {exc.strerror or exc}")
    digest = hashlib.sha256()
    try:
        with os.fdopen(descriptor, "rb") as handle:
            opened = os.fstat(descriptor)
            size = opened.st_size
            if size > limit:
                return Hashed(
                    error=f"{size:,} bytes, over {limit:,}; refused (raise load_settings.max_file_bytes to load it)",
                    limit="max_file_bytes",
                )
            left = size
            while left > 0 and (block := handle.read(min(_BLOCK, left))):
                digest.update(block)
                left -= len(block)
    except OSError as exc:
        return Hashed(error=f"cannot read: {exc.strerror or exc}")
    return Hashed(digest.hexdigest(), stamp=file_stamp(opened))


def _plain(value: Any, depth: int = 0) -> Any:
    """A loader's settings as plain data (its class and simple attributes, nested loaders too)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if depth > 3:
        return type(value).__name__
    if isinstance(value, dict):
        return {str(key): _plain(item, depth + 1) for key, item in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(item, depth + 1) for item in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    attributes = getattr(value, "__dict__", None)
    if attributes is None:
        return type(value).__name__
    return {
        "class": type(value).__name__,
        **{k: _plain(v, depth + 1) for k, v in attributes.items() if k[:1] != "_" or k == "_by_type"},
    }


def loader_signature(loader: Any) -> str:
    """What, besides its bytes, decides what a file's documents are: its loader's settings."""
    return hashlib.sha256(json.dumps(_plain(loader), sort_keys=True, default=str).encode()).hexdigest()[:16]


def file_fingerprint(sha256: str, loader: str, chunking: tuple[int, int, int]) -> str:
    """The stored `source_hash` of a file source: its bytes, its loader's settings, the chunking."""
    return hashlib.sha256(f"file:{loader}:{chunking}:{sha256}".encode()).hexdigest()
