"""What a load did: the numbers a user and a script need, and every input by name.

Each source the load met (a file, a page, an empty folder) appears once in `sources`
with what happened to it: loaded, unchanged, replaced, skipped (+ reason) or failed
(+ reason). The per-kind lists (`loaded`, `failed`, ...) stay for scripts written
against them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: What can happen to one source, in the order the CLI lists them.
OUTCOMES = ("loaded", "replaced", "unchanged", "skipped", "failed")
NOTHING_LOADED = "Nothing was loaded: no file or page in the inputs could be read (see the reasons above)."


@dataclass
class SourceFailure:
    source: str
    reason: str
    fatal: bool = True
    #: The per-file budget setting a refused file went past (`max_records`, ...), if any.
    limit: str | None = None


@dataclass
class SourceOutcome:
    """One source and what happened to it (`reason` for skipped and failed ones)."""

    source: str
    outcome: str
    reason: str = ""
    #: False for a skipped page or a broken link found while crawling: it does not fail the load.
    fatal: bool = True
    limit: str | None = None


@dataclass
class LoadSummary:
    """Outcome of one `load_*` call; `ok` is False when an input failed or nothing was loaded."""

    collection: str
    loaded: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped_unchanged: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    failed: list[SourceFailure] = field(default_factory=list)
    skipped: list[SourceFailure] = field(default_factory=list)
    sources: list[SourceOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Files that changed while the load read them: loaded as they were when opened, and
    #: named so the user loads them again once they are complete (the load is not `ok`).
    changed: list[SourceFailure] = field(default_factory=list)
    documents: int = 0
    chunks_inserted: int = 0
    embeddings_computed: int = 0
    #: Chunks repeating a text embedded just before (in their batch or a recent one): given its vector.
    embeddings_shared: int = 0
    #: Chunks already stored by an interrupted load and kept (not embedded again).
    chunks_kept: int = 0
    #: Chunks of unchanged sources, already stored whole (nothing to do for them).
    chunks_unchanged: int = 0
    #: Stored rows removed because they were copies (a crash can store a batch twice) or
    #: belonged to no current chunk.
    duplicates_removed: int = 0
    #: Stored sources under a loaded folder that it no longer holds (removed when `removed_gone`).
    gone: list[str] = field(default_factory=list)
    #: True when the load was asked to sync: the `gone` sources were removed from the store.
    removed_gone: bool = False
    #: [old reference, new reference] of files found renamed: their stored vectors were moved.
    renamed: list[list[str]] = field(default_factory=list)
    #: The index the collection got after this load because it grew past a size ("HNSW"), if any.
    index_declared: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """False when an input the user gave failed (a broken link found by the crawler does
        not count) or when nothing at all could be loaded."""
        return not any(failure.fatal for failure in self.failed) and not self.warnings and not self.changed

    @property
    def worked(self) -> bool:
        """Whether any source is now in the store (loaded, replaced or already there)."""
        return bool(self.loaded or self.replaced or self.skipped_unchanged or self.renamed or self.removed_gone)

    def add(self, source: str, outcome: str, reason: str = "", fatal: bool = True, limit: str | None = None) -> None:
        """Record what happened to `source` (one of OUTCOMES)."""
        self.sources.append(SourceOutcome(source, outcome, reason, fatal, limit))
        if outcome == "loaded":
            self.loaded.append(source)
        elif outcome == "replaced":
            self.replaced.append(source)
        elif outcome == "unchanged":
            self.skipped_unchanged.append(source)
        elif outcome == "failed":
            self.failed.append(SourceFailure(source, reason, fatal, limit))
        elif outcome == "skipped":
            self.skipped.append(SourceFailure(source, reason, fatal=False))
        else:
            raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")

    def skip_unsupported(self, source: str, reason: str) -> None:
        self.unsupported.append(source)
        self.add(source, "skipped", reason, fatal=False)

    def fail(self, source: str, reason: str, fatal: bool = True, limit: str | None = None) -> None:
        self.add(source, "failed", reason, fatal, limit)

    def note_changed(self, source: str, reason: str) -> None:
        """Name a file that changed while it was read, beside the outcome recorded for it."""
        self.changed.append(SourceFailure(source, reason))
        for outcome in reversed(self.sources):
            if outcome.source == source:
                outcome.reason = "; ".join(part for part in (outcome.reason, reason) if part)
                break

    def finish(self) -> None:
        """Add the warning for a load that stored nothing and failed at nothing (an empty
        folder, only unsupported files): the user should not read silence as success."""
        if not self.worked and not self.failed and NOTHING_LOADED not in self.warnings:
            self.warnings.append(NOTHING_LOADED)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data
