"""What every query returns: the cited answer, its sources, usage per step, steps, time."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from deepsearcher.agent.events import StepEvent
from deepsearcher.types import RetrievalResult

_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


@dataclass(frozen=True)
class Decision:
    """An answer decided in code from answers to a question's parts (agent/both.py), and the
    sentence that says how: it stands like a computed comparison, over what the model wrote."""

    answer: str
    sentence: str


@dataclass
class Source:
    """One numbered source the answer may cite as [index]: a document (its chunks merged), with
    the page or section and the quote that supports what the answer cites it for."""

    index: int
    reference: str
    text: str
    title: str | None = None
    cited: bool = False
    fetched_at: str | None = None  # a web page's fetch time (ISO 8601); None for a private document
    page: int | None = None
    section: str | None = None
    quote: str | None = None
    #: the document's chunks the LLM read: {text, page, section}
    passages: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        shown = {
            "index": self.index,
            "reference": self.reference,
            "title": self.title,
            "text": self.text,
            "cited": self.cited,
            "page": self.page,
            "section": self.section,
            "quote": self.quote,
            "passages": self.passages,
        }
        if self.fetched_at:
            shown["fetched_at"] = self.fetched_at
        return shown


def location(source: Source) -> str:
    """ "p. 14" (a PDF page) or "§ Install > Linux" (a heading path); empty when neither is known."""
    if source.page is not None:
        return f"p. {source.page}"
    return f"§ {source.section}" if source.section else ""


def source_line(source: Source) -> str:
    """`[2] docs/guide.pdf (Guide, p. 14): "the quote"` for terminals and logs."""
    fetched = f"fetched {source.fetched_at}" if source.fetched_at else ""
    label = ", ".join(part for part in (source.title, location(source), fetched) if part)
    line = f"[{source.index}] {source.reference}" + (f" ({label})" if label else "")
    return line + (f': "{source.quote}"' if source.quote else "")


def number_sources(results: list[RetrievalResult]) -> list[Source]:
    """Sources [1..n] in the order they are shown to the LLM."""
    return [
        Source(index=i, reference=r.reference, text=r.text, title=r.title, fetched_at=r.metadata.get("fetched_at"))
        for i, r in enumerate(results, 1)
    ]


def apply_citations(answer: str, sources: list[Source]) -> str:
    """Drop citations that point to no source and mark the sources that are cited."""
    valid = {source.index: source for source in sources}

    def keep(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*,\s*", match.group(1))]
        kept = [n for n in numbers if n in valid]
        for n in kept:
            valid[n].cited = True
        return f"[{', '.join(str(n) for n in kept)}]" if kept else ""

    cleaned = _CITATION.sub(keep, answer)
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)


@dataclass
class StepUsage:
    """Token counts of one step (or of the whole query)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0

    def add(self, prompt: int, completion: int, total: int | None = None) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.total_tokens += total if total is not None else prompt + completion
        self.calls += 1

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "calls": self.calls,
        }


@dataclass
class QueryResult:
    """The full outcome of one query; `query()` reduces it to DeepSearcher's 3-tuple."""

    question: str
    answer: str
    agent: str
    sources: list[Source] = field(default_factory=list)
    retrieved_results: list[RetrievalResult] = field(default_factory=list)
    usage_by_step: dict[str, StepUsage] = field(default_factory=dict)
    steps: list[StepEvent] = field(default_factory=list)
    wall_seconds: float = 0.0
    stopped_by_budget: bool = False
    stopped_by_deadline: bool = False
    #: the few words that answer (a name, a date, "yes"); "not found" when the documents do not say
    short_answer: str = ""
    #: the answer's sentences with the sources that support them (see agent/citations.py)
    claims: list[Any] = field(default_factory=list)
    #: True when the documents did not support an answer and the agent said so instead
    abstained: bool = False

    @property
    def usage(self) -> StepUsage:
        total = StepUsage()
        for usage in self.usage_by_step.values():
            total.prompt_tokens += usage.prompt_tokens
            total.completion_tokens += usage.completion_tokens
            total.total_tokens += usage.total_tokens
            total.calls += usage.calls
        return total

    @property
    def total_tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def llm_calls(self) -> int:
        return self.usage.calls

    def format_answer(self) -> str:
        """The answer followed by its cited sources, for terminals and logs."""
        lines = [self.answer.strip(), ""]
        cited = [source for source in self.sources if source.cited] or self.sources
        if cited:
            lines.append("Sources:")
            lines.extend(source_line(s) for s in cited)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "short_answer": self.short_answer,
            "abstained": self.abstained,
            "claims": [claim.to_dict() for claim in self.claims],
            "agent": self.agent,
            "sources": [source.to_dict() for source in self.sources],
            "retrieved_results": [result.to_dict() for result in self.retrieved_results],
            "usage": self.usage.to_dict(),
            "usage_by_step": {step: usage.to_dict() for step, usage in self.usage_by_step.items()},
            "steps": [step.to_dict() for step in self.steps if step.kind != "answer_token"],
            "wall_seconds": self.wall_seconds,
            "stopped_by_budget": self.stopped_by_budget,
            "stopped_by_deadline": self.stopped_by_deadline,
        }
