""" "Are X and Y both P?" answered by asking it of each: yes only when both are.

Why: asked the whole question over passages about both, the local 1.5B answers "yes" (issue 30's
run: "Are both magazines, the Woman's Viewpoint and Pick Me Up, British publications?" -> "Yes",
its own explanation saying the first was founded in Texas). Asked of one thing, over the
passages that name it, the question is a lookup; the two answers are combined in code.

Only a predicate each thing has on its own is split: "both in the same state" is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepsearcher.agent.citations import content_words, holds_name, naming_first
from deepsearcher.agent.context import RunContext, all_at_once
from deepsearcher.agent.extract import as_passages, extract_answer
from deepsearcher.agent.result import Decision
from deepsearcher.llm.base import BaseLLM
from deepsearcher.types import RetrievalResult

_NAME = r"[A-Z0-9][^\s,?]*(?:\s+(?:(?:of|the|and|de|von|van|from|for)\s+)*[A-Z0-9][^\s,?]*)*"
#: "Are Christopher Nolan and Sathish Kalathil both film directors?"
_PAIR_THEN_BOTH = re.compile(
    r"^(?P<be>are|were)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+both\s+(?P<what>[^?]+?)\s*\?\s*$", re.I
)
#: "Are both magazines, the Woman's Viewpoint and Pick Me Up, British publications?"
_BOTH_KIND_PAIR = re.compile(
    r"^(?P<be>are|were)\s+both\s+[a-z ]+,\s+(?P<a>[^,]+?)\s+and\s+(?P<b>[^,]+?),\s+(?P<what>[^?]+?)\s*\?\s*$", re.I
)
#: "Are both Medici and Senet board games?": the second name ends at the first lowercase word
_BOTH_PAIR = re.compile(
    rf"^(?P<be>(?i:are|were))\s+both\s+(?P<a>(?:the\s+)?{_NAME})\s+and\s+(?P<b>(?:the\s+)?{_NAME})\s+(?P<what>[a-z][^?]*?)\s*\?\s*$"
)
#: a predicate about the two together, not each on its own
_TOGETHER = re.compile(r"\b(?:same|different|each other|one another|together|related|both)\b", re.I)
#: "film directors" -> "a film director": a plural noun phrase of plain words
_PLURAL = re.compile(r"^(?:[A-Za-z-]+\s+){0,3}[A-Za-z-]+[^su]s$")


@dataclass(frozen=True)
class Part:
    """One thing of the pair and the question asked of it."""

    name: str
    question: str
    what: str = ""  # the predicate asked of it: "a British publication"


def parts(question: str) -> list[Part]:
    """The two questions "Are X and Y both P?" asks ("Is X a P?", "Is Y a P?"), or none."""
    match = None
    for pattern in (_PAIR_THEN_BOTH, _BOTH_KIND_PAIR, _BOTH_PAIR):
        match = pattern.match(question.strip())
        if match:
            break
    if not match or _TOGETHER.search(match["what"]):
        return []
    be = "Is" if match["be"].casefold() == "are" else "Was"
    what = _singular(match["what"].strip())
    return [Part(name, f"{be} {name} {what}?", what) for name in (match["a"].strip(), match["b"].strip())]


def stated_of(part: Part, shown: list[RetrievalResult]) -> bool:
    """Whether the passages about the part's thing state its predicate: each name and number of it
    ("British", "1950"), else one of its words ("animated" of "an animated feature"). Why: the
    1.5B answered "yes" to "Is the Woman's Viewpoint a British publication?" over a page saying it
    was founded in Texas (issue 30's run); a "yes" that no passage about the thing words is not an
    answer the documents give."""
    about = " ".join(r.text for r in shown if holds_name(f"{r.title or ''} {r.text}", part.name))
    held = set(content_words(about))
    raw_words = re.findall(r"\w+", part.what)
    named = {word for raw in raw_words if raw[:1].isupper() or raw.isdigit() for word in content_words(raw)}
    rest = set(content_words(part.what)) - named
    return named <= held if named else not rest or bool(rest & held)


def _singular(what: str) -> str:
    """ "film directors" -> "a film director", "American directors" -> "an American director"."""
    if not _PLURAL.match(what) or what.split()[0].casefold() in {"in", "from", "still", "not", "all"}:
        return what
    noun = what[:-1]
    return f"{'an' if noun[0].casefold() in 'aeiou' else 'a'} {noun}"


async def decide(question: str, shown: list[RetrievalResult], llm: BaseLLM, ctx: RunContext) -> Decision | None:
    """ "yes" when every part is answered yes, "no" when one is answered no, else None (not such a
    question, or a part not answered yes or no). One short extraction per part, counted as `both`."""
    asked = parts(question)
    if not asked or not shown:
        return None
    replies = await all_at_once(
        [
            extract_answer(llm, part.question, as_passages(naming_first(shown, [part.name])), ctx, step="both")
            for part in asked
        ]
    )
    said = [reply.split()[0].strip(",.!").casefold() if reply.split() else "" for reply in replies]
    unstated = [word == "yes" and not stated_of(part, shown) for part, word in zip(asked, said, strict=True)]
    said = ["no" if drop else word for word, drop in zip(said, unstated, strict=True)]
    for part, word in zip(asked, said, strict=True):
        ctx.emit("intermediate_answer", query=part.question, answer=word or "not found", used=word in {"yes", "no"})
    answer = "no" if "no" in said else "yes" if all(word == "yes" for word in said) else ""
    if not answer:
        return None
    each = "; ".join(
        f"“{part.question.rstrip('?')}”: {'no (its passages do not say so)' if drop else word}"
        for part, word, drop in zip(asked, said, unstated, strict=True)
    )
    return Decision(answer, f"{answer.capitalize()}, asked of each: {each}.")
