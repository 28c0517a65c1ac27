"""A loaded source document: text plus where it came from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


def content_hash(text: str | bytes) -> str:
    """Stable fingerprint of content; idempotent ingestion compares these."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


@dataclass
class Document:
    """One loaded unit of text.

    `page_content` and `metadata` mirror LangChain's Document so loaders written for
    the original DeepSearcher keep working; `reference` (path or URL), `title` and
    `content_hash` live in metadata so they travel with every chunk.
    """

    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.metadata.setdefault("content_hash", content_hash(self.page_content))

    @property
    def reference(self) -> str:
        return str(self.metadata.get("reference", ""))

    @property
    def title(self) -> str | None:
        title = self.metadata.get("title")
        return str(title) if title else None

    @property
    def content_hash(self) -> str:
        return str(self.metadata["content_hash"])

    @property
    def text(self) -> str:
        return self.page_content
