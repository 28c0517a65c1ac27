"""Keeping a collection true to the folders it was loaded from.

A load lists every file under the folders it was given before it reads any. Against what the
store holds, that listing tells:

- which stored sources lay under one of those folders and are gone (deleted, or renamed):
  `--sync` removes them; without it the summary names them, so a deleted file is never
  silently still answered from;
- which new files are a gone source under a new name: same bytes and parse settings, so the
  same fingerprint. Their stored rows (vectors included) are copied to the new name instead
  of being embedded again; the old name then counts as gone like any other.

The order makes a kill at any point safe: copies are written before anything is removed,
and gone sources are removed only after the load stored everything else, so a re-run finds
either the old rows (and copies again) or the new ones complete (and skips them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from deepsearcher.offline_loading.file_hash import file_fingerprint, hash_file, loader_signature
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.utils.names import safe_reference
from deepsearcher.vector_db.base import BaseVectorDB, SourceRecord

__all__ = ["SyncPlan", "apply_moves", "folder_prefixes", "plan_sync", "remove_sources"]


@dataclass
class SyncPlan:
    """What a load found out about the folders it was given."""

    #: Stored sources under a loaded folder that the folder no longer holds (renamed ones included).
    gone: list[str] = field(default_factory=list)
    #: (stored reference, new reference) pairs with the same fingerprint: a rename or a move.
    moves: list[tuple[str, str]] = field(default_factory=list)


def folder_prefixes(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The reference prefix ("/abs/dir/") of each given path that is a folder; files name no folder.

    A path the OS cannot even stat (a name too long, a loop) is no folder: the load itself
    refuses it by name, so sync must not fail the whole run on it first."""
    prefixes = []
    for given in paths:
        path = Path(given).absolute()
        if _is_folder(path):
            prefixes.append(safe_reference(str(path)).rstrip(os.sep) + os.sep)
    return prefixes


def _is_folder(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # ENAMETOOLONG, ELOOP: Path.is_dir() lets these rise; the loader names them
        return False


def gone_sources(known: dict[str, SourceRecord], prefixes: list[str], listed: set[str]) -> list[str]:
    """Stored references under one of `prefixes` that the listing did not find, sorted."""
    return sorted(
        reference
        for reference in known
        if reference not in listed and any(reference.startswith(prefix) for prefix in prefixes)
    )


class Fingerprinter:
    """A file's fingerprint exactly as the pipeline computes it (bytes, loader settings, chunking)."""

    def __init__(self, loader: object, chunking: tuple[int, int, int], budget: object = None) -> None:
        self.signature = loader_signature(loader)
        self.chunking = chunking
        self.budget = budget

    def __call__(self, entry: LoadedSource) -> str | None:
        if entry.read_path is None:
            return None
        hashed = hash_file(entry.reference, entry.read_path, self.budget)  # type: ignore[arg-type]
        if hashed.error is not None:
            return None
        return file_fingerprint(hashed.sha256, self.signature, self.chunking)


def plan_sync(
    known: dict[str, SourceRecord],
    prefixes: list[str],
    entries: list[LoadedSource],
    fingerprint: Fingerprinter,
) -> SyncPlan:
    """The gone sources, and which new entries are gone ones renamed (only new files are hashed
    here, and only when something is gone: an ordinary re-load costs nothing more)."""
    listed = {entry.reference for entry in entries}
    gone = gone_sources(known, prefixes, listed)
    plan = SyncPlan(gone=gone)
    by_hash: dict[str, str] = {}
    for reference in gone:
        record = known[reference]
        if record.complete and record.source_hash:
            by_hash.setdefault(record.source_hash, reference)
    if not by_hash:
        return plan
    for entry in entries:
        if entry.reference in known or not entry.pending:
            continue
        fingerprint_now = fingerprint(entry)
        old = by_hash.pop(fingerprint_now, None) if fingerprint_now else None
        if old is not None:
            plan.moves.append((old, entry.reference))
    return plan


def apply_moves(vector_db: BaseVectorDB, collection: str, moves: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Copy each moved source's rows to its new reference; the moves done (none when the store
    cannot copy rows: the pipeline then embeds the new files as it would any new file)."""
    done = []
    for old, new in moves:
        copied = vector_db.copy_source(collection, old, new)
        if copied is None:
            break
        done.append((old, new))
    return done


def remove_sources(vector_db: BaseVectorDB, collection: str, references: list[str]) -> int:
    """Delete every row of each reference; returns the rows removed."""
    return sum(vector_db.delete_by_reference(collection, reference) for reference in references)
