"""What a load did: the numbers a user and a script need, and every failure by name."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SourceFailure:
    source: str
    reason: str


@dataclass
class LoadSummary:
    """Outcome of one `load_*` call; `ok` is False when any input failed."""

    collection: str
    loaded: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped_unchanged: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    failed: list[SourceFailure] = field(default_factory=list)
    documents: int = 0
    chunks_inserted: int = 0
    embeddings_computed: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed

    def fail(self, source: str, reason: str) -> None:
        self.failed.append(SourceFailure(source, reason))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data
