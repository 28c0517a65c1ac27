"""What a load did: the numbers a user and a script need, and every failure by name."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SourceFailure:
    source: str
    reason: str
    fatal: bool = True


@dataclass
class LoadSummary:
    """Outcome of one `load_*` call; `ok` is False when any input failed."""

    collection: str
    loaded: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped_unchanged: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    failed: list[SourceFailure] = field(default_factory=list)
    skipped: list[SourceFailure] = field(default_factory=list)
    documents: int = 0
    chunks_inserted: int = 0
    embeddings_computed: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """False when an input the user gave failed (a broken link found by the crawler does not count)."""
        return not any(failure.fatal for failure in self.failed)

    def fail(self, source: str, reason: str, fatal: bool = True) -> None:
        self.failed.append(SourceFailure(source, reason, fatal))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data
