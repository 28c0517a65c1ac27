"""Bridge questions answered hop by hop: "Who is the current opposition leader in the country
where Buyende is located?" needs the country's name before its opposition leader can be searched.

Why: a small model given the passages of the whole question answers its first hop (issue 30:
every MuSiQue answer of the local 1.5B named the association, the country, the county — never
the president, the waterfall, the neighbouring county), and a search for the whole question
rarely finds the second passage, which names the bridge entity, not the question's words.

How: the question's *bridge phrases* are found by their grammar, not by an LLM (asked to split a
question into steps, the 1.5B copied its few-shot examples into 8 of 12 MuSiQue DEV questions'
steps and restated the question as step 1 in the other 4):
a relative clause after a common noun ("the country where Buyende is located"), a
possessive ("Izgoy's performer") and a role of a named thing ("the author of Dead Ernest").
The innermost phrase is asked as a question of its own ("Who is the author of Dead Ernest?"),
searched, and answered by the extraction step; its answer replaces the phrase in the question,
and the next phrase is found in the rewritten question, up to `MAX_HOPS`. What is left ("Who was
in charge of Maharashtra?") is the question the final passages are searched and extracted for.
When no phrase is left, a statement ending on its question word has its last thing named the
same way, once (agent/trailing.py). A hop whose answer is not usable (not found, not in a passage
that mentions the hop's own names) ends the chain: the agent answers as it would have without it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from deepsearcher.agent.citations import (
    content_words,
    grounded_in,
    holds_name_closely,
    named_nowhere,
    named_subjects,
    naming_first,
)
from deepsearcher.agent.context import RunContext
from deepsearcher.agent.extract import answer_kind, as_passages, extract_answer, usable_extraction
from deepsearcher.agent.trailing import NOT_CHAINED, trailing_ask
from deepsearcher.llm.base import BaseLLM
from deepsearcher.types import RetrievalResult

#: Bridges resolved at most (MuSiQue goes to 4 hops: 3 bridges and the question itself).
MAX_HOPS = 3

#: a lowercase word that is not a function word ("the first compiler and in which year" is no phrase)
_NOUN = r"(?!(?:and|or|but|in|on|at|of|to|for|with|by|from|as|is|was|are|were|be|been|has|have|had)\b)[a-z][\w-]*"
#: a common noun phrase of one to three lowercase words after "the" ("the first modern greenhouses")
_HEAD = rf"(?:{_NOUN}\s+){{0,2}}?{_NOUN}"
_RELATIVE = r"(?:which|that|who|whom|whose|where|(?:in|on|at|by|from|of|for|to|with|under|during|into)\s+which)"
#: "the country where Buyende is located": the clause runs to a comma, the question's end, or
#: the question's own "did/does" ("…where the Tikhaya Sosna is located did the Renaissance begin?");
#: a comma before a capitalised word is a place's ("…around Leland, North Carolina in 1986")
_CLAUSE = r"(?:(?!\s(?:did|does|do)\s)(?:[^,?;]|,(?=\s[A-Z])))*[^,?;\s]"
#: a question word asking inside a relative clause ("…premiered on which date", "…founded by who"):
#: the clause is what is asked, not a bridge ("…lived in when he died" asks nothing)
_ASKED_INSIDE = re.compile(r"\b(?:what|which)\s+\w+|\b(?:what|which|who|whom|when|where)\s*$", re.IGNORECASE)
_LEADING_RELATIVE = re.compile(rf"^\s*{_RELATIVE}\s+")
_RELATIVE_PHRASE = re.compile(rf"\bthe\s+(?P<head>{_HEAD})\s+{_RELATIVE}\s+{_CLAUSE}", re.UNICODE)
_CAPITALISED = r"[A-Z0-9][^\s,?;:'’]*"
_JOINER = r"(?:of|the|and|for|de|da|del|von|van|der|la|le|&)"
#: a named thing: capitalised words, joined by "of", "for", "von"... only before another capitalised
#: word ("Mississippi Institute of Arts and Letters", "Jump for Glory", "Lil Hardin Armstrong")
_NAME = rf"[A-Z][^\s,?;:'’]*(?:\s+(?:{_JOINER}\s+)*{_CAPITALISED})*"
#: "Izgoy's performer", "Damerjog's country": one lowercase role word after a name's possessive
_POSSESSIVE_PHRASE = re.compile(rf"(?P<owner>{_NAME})['’]s\s+(?P<role>{_NOUN})\b")
#: "the author of Dead Ernest", "the spouse of Lil Hardin Armstrong"
#: (the whole name: not "Oskar" of "the first king of Oskar Lund's country")
_ROLE_OF_PHRASE = re.compile(
    rf"\bthe\s+(?P<role>{_HEAD})\s+of\s+(?P<owner>(?:the\s+)?{_NAME})(?![\w'’-])(?!\s+(?:{_JOINER}\s+)*[A-Z0-9])"
)
#: the question itself asking for the phrase ("Who is the spouse of X?"): not a bridge, the last hop
_ASKS_FOR = re.compile(r"^\W*(?:who|what|which)\s+(?:is|was|are|were)\s+$", re.IGNORECASE)
#: a relative clause right after "did"/"does" is the subject of the question: where it ends and the
#: question's own verb starts ("When did the city where the Olympics will be held fall?") is unknown
_SUBJECT_POSITION = re.compile(r"\b(?:do|does|did)\s+(?:the\s+\w+\s+(?:where|which|that|who)\s+)?$", re.IGNORECASE)
#: "India's national ...": an adjective, not a role
_ADJECTIVE = re.compile(r"(?:al|ic|ian|ese|ish|ous|ive|ful|ern|ary)$")
_PERSON_ROLES = frozenset(
    """actor actress author writer novelist poet director producer composer singer songwriter performer artist
    player founder co-founder spouse wife husband partner father mother parent son daughter child sibling brother
    sister grandfather grandmother creator president leader king queen monarch emperor man woman person
    individual musician designer architect lyricist screenwriter editor owner coach manager governor mayor
    minister chancellor ceo chairman head captain narrator host presenter star lead vocalist inventor
    discoverer explorer painter sculptor""".split()
)
#: what "the X of <name>" / "<name>'s X" may ask for as a bridge: a person, or a place or body one has
_BRIDGE_ROLES = _PERSON_ROLES | frozenset(
    """birthplace hometown country nationality capital headquarters label company network team band album
    publisher manufacturer predecessor successor developer sponsor university school city state county
    province region continent river""".split()
)


@dataclass(frozen=True)
class Hop:
    """One bridge resolved: the phrase of the question, the question asked for it, its answer and
    the passages it was read from (best first)."""

    phrase: str
    question: str
    answer: str
    passages: list[RetrievalResult] = field(default_factory=list)


def _stands(answer: str, asked: str, titles: list[str], texts: list[str], question: str) -> bool:
    """Whether a hop's answer can be put in the question: usable (agent/extract.py), not already
    in it, and in a passage that holds one of the hop's own names whole: an answer read from a
    passage about something else is another question's ("the river which the Tekeze River turns
    into" -> "Squamish River", from a page sharing only the word "River")."""
    if not usable_extraction(answer, asked, titles, texts) or answer.casefold() in question.casefold():
        return False
    names = named_subjects(asked)
    return grounded_in(answer, [text for text in texts if _holds_a_name(text, names)])


def _holds_a_name(text: str, names: list[str]) -> bool:
    """Whether `text` holds one of a hop's `names` whole and close together (`holds_name_closely`:
    "Tekeze River", not just "River"; not "drivers … World Rally Championship" for the World
    Drivers' Championship), any one of them ("German" of "which German musician" is no page's
    name); True when there is none."""
    return not names or any(holds_name_closely(text, name) for name in names)


@dataclass(frozen=True)
class Chain:
    """The hops resolved, innermost first, and the question rewritten with their answers."""

    question: str
    hops: list[Hop]
    original: str = ""

    @property
    def resolved(self) -> bool:
        """Whether there is another question to ask: a hop answered, or a quoted name put in."""
        return bool(self.hops) or self.question != (self.original or self.question)


def bridge_phrases(question: str) -> list[str]:
    """The question's bridge phrases whose span holds no other one (the innermost), in order; none
    for a choice or yes/no question (its names are compared, not chained)."""
    if answer_kind(question) in NOT_CHAINED:
        return []
    spans = []
    for pattern in (_RELATIVE_PHRASE, _POSSESSIVE_PHRASE, _ROLE_OF_PHRASE):
        found = (
            pattern.finditer(question) if pattern is _POSSESSIVE_PHRASE else _matches_at_every_the(pattern, question)
        )
        for match in found:
            if _is_bridge(question, match):
                spans.append((match.start(), match.end()))
    innermost = [
        span
        for span in spans
        if not any(other != span and span[0] <= other[0] and other[1] <= span[1] for other in spans)
    ]
    return [question[start:end] for start, end in sorted(set(innermost))]


def _matches_at_every_the(pattern: re.Pattern[str], question: str) -> list[re.Match[str]]:
    """Matches of a phrase that opens with "the", tried at every "the", overlapping ones included:
    "the state that borders the east of the state where Hank Snow lived" holds "the state where
    Hank Snow lived", which `finditer`, having matched the outer phrase, would never try."""
    starts = [word.start() for word in re.finditer(r"\bthe\s", question)]
    return [match for start in starts if (match := pattern.match(question, start))]


def _is_bridge(question: str, match: re.Match[str]) -> bool:
    """A phrase is a bridge unless it is what the question asks for ("Who is <phrase>?"), a
    relative clause whose end is unknown, or a role that names no person, place or body."""
    before, rest = question[: match.start()], question[match.end() :].strip(" ?.!")
    if _ASKS_FOR.match(before) and not rest:
        return False
    groups = match.groupdict()
    if "head" in groups:
        clause = _LEADING_RELATIVE.sub("", question[match.end("head") : match.end()], count=1)
        return not _SUBJECT_POSITION.search(before) and not _ASKED_INSIDE.search(clause)
    role = groups["role"].split()[-1].casefold()
    singular = role[:-1] if role.endswith("s") and role[:-1] in _BRIDGE_ROLES else role
    return singular in _BRIDGE_ROLES and not _ADJECTIVE.search(singular)


def hop_question(phrase: str) -> str:
    """The phrase asked on its own: "Who is the author of Dead Ernest?"."""
    match = _ROLE_OF_PHRASE.fullmatch(phrase) or _RELATIVE_PHRASE.fullmatch(phrase)
    role = match.group("role" if "role" in match.groupdict() else "head") if match else ""
    possessive = _POSSESSIVE_PHRASE.fullmatch(phrase)
    if possessive:
        role = possessive.group("role")
    last = role.split()[-1].casefold() if role.split() else ""
    asks = "Who" if last in _PERSON_ROLES or last.rstrip("s") in _PERSON_ROLES else "What"
    return f"{asks} is {phrase}?"


Search = Callable[[str], Awaitable[list[RetrievalResult]]]


async def resolve_chain(question: str, search: Search, llm: BaseLLM, ctx: RunContext) -> Chain:
    """Resolve the question's bridge phrases innermost first (one search and one short extraction
    each), then its trailing ask (`trailing_ask`) once; stop at the first hop whose answer cannot
    stand. Emits one `intermediate_answer` per hop."""
    hops: list[Hop] = []
    current = question
    tail_done = False
    for _ in range(MAX_HOPS):
        phrases = bridge_phrases(current)
        tail = None if phrases or tail_done else trailing_ask(current)
        if tail is not None:
            tail_done = True
            if tail.named:  # "…for the show "Scaredy Squirrel" which was written by who?": nothing to find
                current = tail.asked_of(tail.named)
                continue
        elif not phrases:
            break
        asked = tail.hop if tail is not None else hop_question(phrases[0])
        found = await search(asked)
        texts = [result.text for result in found]
        if not found or named_nowhere(asked, texts):
            break  # nothing found names the phrase's subject: an answer would be invented
        names = named_subjects(asked)
        about = naming_first(found, names)
        # only a passage holding a hop's name can state an answer that stands (`_stands`); the
        # 1.5B read "Squamish River" off a tributary's page shown beside the Tekeze's own
        passages = as_passages([result for result in about if _holds_a_name(result.text, names)] or about)
        answer = await extract_answer(llm, asked, passages, ctx, step="bridge")
        titles = [title for title, _ in passages]
        if answer:
            ctx.hop_answers.append((asked, answer))
        if not _stands(answer, asked, titles, texts, current):
            ctx.emit("intermediate_answer", query=asked, answer=answer or "not found", used=False)
            break
        ctx.emit("intermediate_answer", query=asked, answer=answer, used=True)
        phrase = phrases[0] if tail is None else asked
        hops.append(Hop(phrase=phrase, question=asked, answer=answer, passages=found))
        # "Nashville, U. S" -> "Nashville": a comma would end the next relative clause too early
        name = answer.split(",")[0].strip() or answer
        current = tail.asked_of(name) if tail is not None else current.replace(phrase, name, 1)
    return Chain(question=current, hops=hops, original=question)


#: the noun a question asks for: "In which country …?", "What is the country where …?"
_ASKED_NOUN = re.compile(
    r"^\W*(?:(?:in|on|at|from|of|for|to|by|with)\s+)?(?:which|what)\s+(?:(?:is|was|are|were)\s+)?(?:the\s+)?(\w+)",
    re.I,
)


def _asked_noun(question: str) -> str | None:
    match = _ASKED_NOUN.match(question)
    return match.group(1).casefold() if match else None


def answers_a_hop(short: str, question: str, hop_answers: Sequence[tuple[str, str]]) -> str | None:
    """The hop question whose answer `short` is, when the question asks for something else: a hop
    answers a part of it ("Austria", the country of Aschenbrodel's composer, is not who was in
    charge of it; in issue 30's runs 4 such answers were wrong, none right). The same answer stands
    where both ask for the same noun ("In which country …" after "What is the country where …")."""
    said = content_words(short)
    asked = _asked_noun(question)
    for hop_question, answer in hop_answers:
        if said and content_words(answer) == said and (asked is None or asked != _asked_noun(hop_question)):
            return hop_question
    return None
