"""Which of two things came first, computed from the dates in their own passages, not by the model.

Small models quote both dates right and then conclude wrongly (issue 30: "X was born earlier, on
17 February 1944, while Y was born on November 19, 1927"). For a question of the form "Which ...
first/earlier/later ..., A or B?" each candidate's year is read from the source about it (its
title, else a passage naming it: the first year there, a page's founding or birth date as a
rule) and compared in code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepsearcher.agent.result import Source

_EARLIER_WORDS = r"first|earlier|earliest|older|oldest|sooner|before"
_LATER_WORDS = r"later|latest|last|younger|youngest|more recent(?:ly)?|newer|after"
_EARLIER = re.compile(rf"\b({_EARLIER_WORDS})\b", re.I)
_LATER = re.compile(rf"\b({_LATER_WORDS})\b", re.I)
_CANDIDATES = re.compile(r"(?:[,:]|\bbetween\b)\s*([^,:?]+?)\s+(?:or|and)\s+([^,:?]+?)\s*\?\s*$", re.I)
#: "Which band was formed first The Exies or Circus Diablo ?": no comma, the comparative before the pair
_AFTER_COMPARATIVE = re.compile(
    rf"\b(?:{_EARLIER_WORDS}|{_LATER_WORDS})\s+([^,:?]+?)\s+or\s+([^,:?]+?)\s*\?\s*$",
    re.I,
)
#: "the forming of The Dandy Warhols or the birth of Robert Young": the things, dated by their pages
_EVENT_OF = re.compile(
    r"^(?:the\s+)?(?:forming|formation|founding|birth|death|release|publication|opening|creation|establishment)"
    r"\s+of\s+",
    re.I,
)
#: "the Pterocarya": a lowercase article is not part of the name ("The Exies" keeps its own)
_ARTICLE = re.compile(r"^the\s+")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


@dataclass
class Comparison:
    """The computed outcome: the winner, and each candidate's year with the source it came from."""

    winner: str
    years: dict[str, tuple[int, int]]  # candidate -> (year, source index)

    def sentence(self) -> str:
        parts = "; ".join(f"{name}: {year} [{index}]" for name, (year, index) in self.years.items())
        return f"Compared from the sources' dates ({parts}): {self.winner}."


def candidates(question: str) -> tuple[str, str] | None:
    """("A", "B") of a "..., A or B?" question that asks which came earlier or later."""
    if not (_EARLIER.search(question) or _LATER.search(question)):
        return None
    return choices(question)


def choices(question: str) -> tuple[str, str] | None:
    """("A", "B") of any "..., A or B?" question ("Which plant is larger, the Pterocarya or the
    Cotula?"): scoring credits an answer naming one of them only."""
    match = _CANDIDATES.search(question.strip()) or _AFTER_COMPARATIVE.search(question.strip())
    if not match:
        return None
    first, second = (_ARTICLE.sub("", _EVENT_OF.sub("", part.strip().strip("\"'“”"))) for part in match.groups())
    return (first, second) if first and second and first.casefold() != second.casefold() else None


def _year_of(name: str, sources: list[Source]) -> tuple[int, int] | None:
    wanted = name.casefold()
    by_title = [s for s in sources if (s.title or "").casefold() == wanted]
    naming = [s for s in sources if wanted in s.text.casefold()]
    for source in by_title + naming:
        text = source.text
        at = text.casefold().find(wanted)
        match = _YEAR.search(text, max(at, 0)) if source not in by_title else _YEAR.search(text)
        if match:
            return int(match.group(1)), source.index
    return None


def compare(question: str, sources: list[Source]) -> Comparison | None:
    """The comparison computed from `sources`, or None (not such a question, a year missing, a tie)."""
    pair = candidates(question)
    if pair is None:
        return None
    years = {name: _year_of(name, sources) for name in pair}
    if any(value is None for value in years.values()):
        return None
    known = {name: value for name, value in years.items() if value is not None}
    (a, (year_a, _)), (b, (year_b, _)) = known.items()
    if year_a == year_b:
        return None
    wants_later = bool(_LATER.search(question)) and not _EARLIER.search(question)
    earlier, later = (a, b) if year_a < year_b else (b, a)
    return Comparison(winner=later if wants_later else earlier, years=known)
