"""The concise answer, extracted: one short LLM call that reads the question and the first few
passages in search order and copies out only the words that answer it (or says "not found").

Why a separate call: asked for "Answer: ..." inside a cited explanation over every source, a small
model (the local 1.5B) drowns — it writes a sentence restating the question, or attaches the right
words to the wrong role (issue 30: "Chuck Rowland directed Maximum Overdrive"). Asked only for the
answer's words, typed by the question (who -> a person, when -> a date...), from 3-5 passages, it
copies them. The explanation is then checked against this answer (agent/grounding.py).
"""

from __future__ import annotations

import re

from deepsearcher.agent import prompts
from deepsearcher.agent.citations import content_words, grounded_in, strip_citations
from deepsearcher.agent.context import RunContext
from deepsearcher.llm.base import BaseLLM
from deepsearcher.types import RetrievalResult

#: Passages the extraction reads, best first: a small model answers from the first ones it is shown.
EXTRACT_PASSAGES = 4
#: Characters of each passage shown: enough for the sentence that holds the answer.
PASSAGE_CHARS = 900
#: Tokens the model may write: the answer is a few words.
EXTRACT_TOKENS = 24
MAX_EXTRACTED_WORDS = 10

_YES_NO = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b(?!.*\b(?:or)\b)", re.I
)
_NUMBER_QUESTION = re.compile(
    r"^\W*(?:how\s+(?:many|much|long|old|tall|far|high)|what\s+(?:number|percentage))\b", re.I
)
_DATE_ASK = r"(?:when|(?:in\s+)?(?:what|which)\s+(?:year|date|decade|century))"
#: asked first ("When was…") or last in a statement ("…another sport that was started when?"),
#: not last in another question ("Who said what when?")
_DATE_QUESTION = re.compile(
    rf"^\W*{_DATE_ASK}\b|^(?!\W*(?:who|whom|whose|what|which|where|why|how)\b).*\b{_DATE_ASK}\s*\?\s*$", re.I
)
_PERSON_QUESTION = re.compile(r"^\W*(?:who|whom|whose)\b", re.I)
_PLACE_QUESTION = re.compile(
    r"^\W*where\b|\b(?:what|which)\s+(?:city|country|county|state|town|place|continent)\b", re.I
)
_KINDS: list[tuple[re.Pattern[str], str]] = [
    (_NUMBER_QUESTION, "a number"),
    (_DATE_QUESTION, "a date or year"),
    (_PERSON_QUESTION, "a person's or group's name"),
    (_PLACE_QUESTION, "a place"),
]
_NOT_FOUND = re.compile(r"\bnot\s+found\b|\bnot\s+(?:mentioned|stated|given)\b|\bunknown\b|^\W*none\W*$", re.I)
#: "Passage 2": the label the extraction prompt gave a passage, not an answer (issue 30's 1.5B run)
_PASSAGE_LABEL = re.compile(r"^\W*passages?\s*\d+(?:\s*(?:,|and)\s*\d+)*\W*$", re.I)
_PREFIX = re.compile(r"^\W*(?:(?:short\s+|final\s+)?answer|the answer is)\W*?[:：]?\s*", re.I)


#: "Passage 2 [6]." inside a written answer: the model naming a passage it read, not answering
_PASSAGE_NAMED = re.compile(r"\bpassages?\s+\d+(?:\s*\[\d+\])?\s*[.:]?", re.I)


def is_passage_label(text: str) -> bool:
    """Whether `text` only names passages ("Passage 2"): what the model was shown, not an answer."""
    return bool(_PASSAGE_LABEL.match(text))


def without_passage_names(text: str) -> str:
    """`text` without the passage labels it names ("Passage 2 [6]. On March 2…" -> "On March 2…")."""
    return _PASSAGE_NAMED.sub(" ", text).strip()


def expected_kind(question: str) -> str | None:
    """What kind of words answer the question: "number" (how many...), "date" (when...), else None."""
    if _NUMBER_QUESTION.search(question):
        return "number"
    return "date" if _DATE_QUESTION.search(question) else None


#: a date without digits: "the early twentieth century", "in May", "the Bronze Age"
_DATE_WORDS = re.compile(
    r"\b(?:(?i:centur(?:y|ies)|decades?|millenni(?:um|a)|eras?|ages?)|BCE?|AD|CE|January|February|March|April"
    r"|May|June|July|August|September|October|November|December)\b"
)


def has_kind(short: str, kind: str | None) -> bool:
    """Whether `short` is of the kind `expected_kind` gave: a number has a digit, a date a digit or
    a word of a date ("early twentieth century"); anything else passes."""
    if kind is None or any(char.isdigit() for char in short):
        return True
    return kind == "date" and bool(_DATE_WORDS.search(short))


#: "What kind of university …?" asks for a class of institution ("a land-grant university")
_INSTITUTION_WORDS = frozenset({"university", "college", "school", "institute", "academy"})
_KIND_OF_INSTITUTION = re.compile(
    rf"\b(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\s+(?P<noun>{'|'.join(sorted(_INSTITUTION_WORDS))})\b", re.I
)


def names_one_institution(short: str, question: str) -> str | None:
    """The institution noun a "What kind of university …?" question asks about, when `short` is the
    name of one such institution ("Newark College of Arts and Sciences", "Rutgers University"):
    one of a kind, not the kind. Else None. A kind of plane may be named ("Boeing B-29"), so only
    institutions, whose own names carry the noun, are told apart this way."""
    match = _KIND_OF_INSTITUTION.search(question)
    words = [word.strip(",.;:()") for word in short.split()]
    proper = [word for word in words if word.casefold() not in {"of", "and", "the", "for", "at", "in"}]
    if not match or not proper or not all(word[:1].isupper() for word in proper):
        return None
    return match["noun"].casefold() if any(word.casefold() in _INSTITUTION_WORDS for word in proper) else None


def answer_kind(question: str) -> str:
    """What kind of words answer `question`, in the prompt's words."""
    if " or " in question and "?" in question:
        return "one of the choices the question names"
    if _YES_NO.search(question):
        return "yes or no"
    for pattern, kind in _KINDS:
        if pattern.search(question):
            return kind
    return "a name, a date, a number or a few words"


def clean_extracted(reply: str) -> str:
    """The first line of the reply without labels, quotes, citations and the final period."""
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    first = _PREFIX.sub("", lines[0]) if lines else ""
    first = strip_citations(first).strip("*_`\"“”' ").rstrip(".").strip()
    return " ".join(first.split()[:MAX_EXTRACTED_WORDS])


def usable_extraction(short: str, question: str, titles: list[str], texts: list[str]) -> bool:
    """Whether an extracted answer can stand as the answer: not "not found", not only the
    question's own words (unless it offers choices), not the title of a passage the question is
    about, a number where one is asked, and its names and numbers in a passage read."""
    if not short or _NOT_FOUND.search(short) or is_passage_label(short):
        return False
    kind = answer_kind(question)
    if kind == "yes or no":
        return short.split()[0].strip(",.!").casefold() in {"yes", "no"}
    words = set(content_words(short))
    if not words:
        return False
    choices = kind.startswith("one of the choices")
    if words <= set(content_words(question)) and not choices:
        return False
    bare = short.casefold()
    if not choices and any(bare == title.casefold() and title.casefold() in question.casefold() for title in titles):
        return False
    if not has_kind(short, expected_kind(question)):
        return False
    return grounded_in(short, texts)


def as_passages(results: list[RetrievalResult]) -> list[tuple[str, str]]:
    """The (title, text) pairs `extract_answer` reads, in the order given."""
    return [(result.title or "", result.text) for result in results]


async def extract_answer(
    llm: BaseLLM, question: str, passages: list[tuple[str, str]], ctx: RunContext, step: str = "extract"
) -> str:
    """The few words answering `question` copied from `passages` ((title, text), best first), or "".
    One LLM call with a small reply budget, counted under `step`."""
    shown = passages[:EXTRACT_PASSAGES]
    if not shown:
        return ""
    block = "\n\n".join(
        f"Passage {i} ({title}):\n{text[:PASSAGE_CHARS]}" if title else f"Passage {i}:\n{text[:PASSAGE_CHARS]}"
        for i, (title, text) in enumerate(shown, 1)
    )
    kind = answer_kind(question)
    prompt = prompts.EXTRACT_ANSWER.format(passages=block, question=question, kind=kind)
    reply = await ctx.chat(llm, [{"role": "user", "content": prompt}], step, max_tokens=EXTRACT_TOKENS)
    return clean_extracted(reply)
