"""The next hop's searches: names the kept passages give that no search has used yet.

An LLM's reflection often rephrases the question instead of searching the name a kept
passage just gave it (the film's director, the song's performer). These searches are
added deterministically, whatever the reflection says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from deepsearcher.graph.entities import mentions, normalise, title_key
from deepsearcher.types import RetrievalResult

#: Names searched per round, at most.
MAX_FOLLOW_UPS = 3


def follow_up_queries(
    question: str, passages: Sequence[RetrievalResult], searched: Iterable[str], limit: int = MAX_FOLLOW_UPS
) -> list[str]:
    """Names `passages` (best first) mention that neither the question nor a search in
    `searched` contains, nor the passage's own title, in the order they are met."""
    known = " | ".join(normalise(text) for text in [question, *searched])
    names: list[str] = []
    for passage in passages:
        own = title_key(passage.title or "")
        for name in mentions(passage.text):
            key = normalise(name)
            if key != own and key not in known and name not in names:
                names.append(name)
                if len(names) >= limit:
                    return names
    return names
