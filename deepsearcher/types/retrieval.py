"""What a search returns, and what a collection is."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from deepsearcher.types.json import JSONObject, JSONValue


class RetrievalResult:
    """One retrieved chunk. Positional order matches DeepSearcher's class."""

    def __init__(
        self,
        embedding: Any,
        text: str,
        reference: str,
        metadata: dict[str, Any] | None = None,
        score: float = 0.0,
    ) -> None:
        self.embedding = embedding
        self.text = text
        self.reference = reference
        self.metadata = join_window_parts(metadata or {}, text)
        self.score = score
        #: Its place in the store's own ranking (0 = first) when a later step re-ranked the list
        #: (graph links); None when the list is in that order already or the chunk was added.
        self.search_rank: int | None = None

    @property
    def wider_text(self) -> str:
        """The sentence-window context an LLM should read (falls back to the chunk)."""
        return str(self.metadata.get("wider_text") or self.text)

    @property
    def title(self) -> str | None:
        title = self.metadata.get("title")
        return str(title) if title else None

    def to_dict(self) -> JSONObject:
        return {
            "text": self.text,
            "reference": self.reference,
            "metadata": self.metadata,
            "score": self.score,
        }

    def __repr__(self) -> str:
        return f"RetrievalResult(score={self.score:.4f}, reference={self.reference!r}, text={self.text[:60]!r})"


def join_window_parts(metadata: dict[str, Any], text: str) -> dict[str, Any]:
    """Metadata with `wider_text` rebuilt from the stored sides (`wider_before` + text +
    `wider_after`, see loader/splitter.py), so readers see one key whichever way a row was stored."""
    if "wider_before" not in metadata and "wider_after" not in metadata:
        return metadata
    joined = {key: value for key, value in metadata.items() if key not in ("wider_before", "wider_after")}
    joined.setdefault("wider_text", f"{metadata.get('wider_before') or ''}{text}{metadata.get('wider_after') or ''}")
    return joined


def deduplicate_results(results: Iterable[RetrievalResult]) -> list[RetrievalResult]:
    """Drop results whose text was already seen; the first (best-ranked) one wins."""
    seen: set[str] = set()
    unique: list[RetrievalResult] = []
    for result in results:
        if result.text in seen:
            continue
        seen.add(result.text)
        unique.append(result)
    return unique


@dataclass
class CollectionInfo:
    """A collection as the CollectionRouter sees it: its name and what it holds."""

    collection_name: str
    description: str = ""
    dim: int | None = None
    embedding_model: str | None = None
    extra: dict[str, JSONValue] = field(default_factory=dict)
