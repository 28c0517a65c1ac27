"""A piece of a document, as embedded and stored."""

from __future__ import annotations

from dataclasses import dataclass, field

from deepsearcher.types.json import JSONValue


@dataclass
class Chunk:
    """A retrievable unit: `text` is what the answer quotes, `index_text` what we match on.

    The document title (when known) is prepended for indexing only, so both the dense
    and the BM25 side see it while `text` stays the chunk itself.
    """

    text: str
    reference: str
    metadata: dict[str, JSONValue] = field(default_factory=dict)
    embedding: list[float] | None = None

    @property
    def title(self) -> str | None:
        title = self.metadata.get("title")
        return str(title) if title else None

    @property
    def index_text(self) -> str:
        heading = self.heading
        if heading and not self.text.startswith(heading):
            return f"{heading}\n{self.text}"
        return self.text

    @property
    def heading(self) -> str | None:
        """Title and section path ("Guide > Install > On Linux"), a part said twice kept once: what
        a chunk is about, indexed with it (the section's words are rarely repeated in its text)."""
        parts: list[str] = []
        for part in [self.title or "", *str(self.metadata.get("section") or "").split(" > ")]:
            part = part.strip()
            if part and part not in parts:
                parts.append(part)
        return " > ".join(parts) or None
