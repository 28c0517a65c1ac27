"""Right, or honest: the concise answer, the grounding check and the abstention.

The answer prompt asks for a first line `Answer: <the few words>`; a model that writes none gets
its short answer cut from its first sentence (the words the question did not already hold).
Before anything is returned the short answer's names, dates and numbers must be in a passage the
LLM read; when they are not, or the model itself says the documents do not hold the answer, the
agent says what it found and what is missing instead of answering (issue 30: "According to [1],
the population of the Faroe Islands in 1801 was 140", with nothing about it in the documents).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from deepsearcher.agent.bridge import answers_a_hop
from deepsearcher.agent.citations import (
    Claim,
    attribute,
    content_words,
    grounded_in,
    named_subjects,
    source_label,
    split_sentences,
    strip_citations,
    unmentioned_subjects,
)
from deepsearcher.agent.comparison import choices, compare
from deepsearcher.agent.extract import (
    answer_kind,
    expected_kind,
    has_kind,
    is_passage_label,
    names_one_institution,
    usable_extraction,
    without_passage_names,
)
from deepsearcher.agent.linked import citable, linked_to_question
from deepsearcher.agent.result import Decision, Source

NOT_FOUND_SHORT = "not found"
MAX_SHORT_WORDS = 12

_ANSWER_LINE = re.compile(r"^\W*(?:short\s+|final\s+)?answer\W*?[:：]\s*(.*?)\s*$", re.I)
_SAYS_NOT_FOUND = re.compile(
    r"\b(?:not\s+(?:found|mentioned|provided|stated|specified|given|available|included|listed)"
    r"|no\s+(?:relevant\s+)?(?:information|mention|data|details?)"
    r"|do(?:es)?\s*(?:n't|\s+not)\s+(?:contain|mention|provide|say|specify|state|include|give)"
    r"|(?:can\s*not|cannot|can't|unable\s+to)\s+(?:be\s+)?(?:determine|answer|find|found|determined)"
    r"|unknown)\b",
    re.I,
)


@dataclass
class CheckedAnswer:
    """What the agent returns: the cited explanation, the short answer, the claims, and whether it abstained."""

    answer: str
    short_answer: str
    claims: list[Claim] = field(default_factory=list)
    abstained: bool = False


def split_short_answer(text: str) -> tuple[str | None, str]:
    """(the model's `Answer: ...` line if one of the first lines is such, the rest of the text)."""
    lines = text.strip().splitlines()
    for at, line in enumerate(lines[:3]):
        match = _ANSWER_LINE.match(line)
        if match:
            rest = "\n".join(lines[:at] + lines[at + 1 :]).strip()
            return _clean(match.group(1)), rest or match.group(1).strip()
    return None, text.strip()


def _clean(short: str) -> str:
    short = strip_citations(short).strip('*_`"“” ').rstrip(".")
    return " ".join(short.split()[:MAX_SHORT_WORDS])


def short_from_sentence(answer: str, question: str) -> str:
    """The words of the answer's first claim that the question did not hold, e.g. "The engineer
    who led it was Tomas Eriksen [1]." -> "Tomas Eriksen"; "Yes, ..." -> "Yes"."""
    asked = set(content_words(question))
    for sentence in split_sentences(strip_citations(answer)):
        words = sentence.split()
        if words and words[0].strip(",.!").casefold() in {"yes", "no"}:
            return words[0].strip(",.!").capitalize()
        novel = [i for i, word in enumerate(words) if set(content_words(word)) - asked]
        if novel:
            return _clean(" ".join(words[novel[0] : novel[-1] + 1]).strip(",;:"))
    return _clean(answer)


_OWN_SOURCES = re.compile(
    r"^\W*(?:sources?|references?)\W*[:：]|^\s*(?:\[\d+\]\s*)?(?:\(([^()]|\([^()]*\))*\)\s*(?:\[\d+\]\s*)*){2,}$", re.I
)
_LABEL = re.compile(r"^\W*explanation\W*[:：]\s*", re.I)


def _without_own_source_list(text: str) -> str:
    """The explanation without its "Explanation:" label and the model's own source lists ("Sources:
    [1] ...", "[1] (Title) [2] (Title)"): the sources are listed from what was read, with quotes."""
    lines = [_LABEL.sub("", line) for line in text.splitlines() if not _OWN_SOURCES.match(line)]
    return "\n".join(lines).strip()


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_DATE = re.compile(rf"\b(?:\d{{1,2}}\s+{_MONTH}\s+\d{{3,4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{3,4}}|\d{{3,4}}s?)\b")
_NUMBER = re.compile(r"\b\d[\d,.]*(?:\s+(?:million|billion|thousand|hundred|percent))?\b")


def fits_question(short: str, question: str, sources: list[Source]) -> bool:
    """Whether a short answer can answer the question at all: not a source's label the model copied
    ("(Harry Potter in translation)") nor the title of a source the question is about (a page
    titled by the answer is no label: "Lake Tessa" from the page "Lake Tessa"), not only words of
    the question (its own name given back, unless the question offers choices: "A or B?"), a
    number or date where one is asked."""
    if not short:
        return False
    bare = short.strip("()[] ").casefold()
    if (
        short.startswith("(")
        or is_passage_label(short)
        or any(bare == (source.title or "").casefold() in question.casefold() for source in sources)
    ):
        return False
    if any(f"({source.title})" in short for source in sources if source.title):  # "… of (Harry Potter in …)"
        return False
    words = set(content_words(short))
    if words and words <= set(content_words(question)) and " or " not in question:
        return False
    kind = expected_kind(question)
    return has_kind(short, kind)


def _without_labels(text: str, sources: list[Source]) -> str:
    """`text` without the "(Title)" labels the model copied from the source list it was shown."""
    for source in sources:
        for label in {source_label(source), source.title or ""} - {""}:
            text = text.replace(f"({label})", " ")
    return re.sub(r"^\W*(?:\[\d+\]\W*)*$", "", text.strip()).strip()


def typed_short(question: str, explanation: str) -> str | None:
    """The first number or date of the explanation when the question asks for one, else None."""
    pattern = {"number": _NUMBER, "date": _DATE}.get(expected_kind(question) or "")
    match = pattern.search(strip_citations(explanation)) if pattern else None
    return match.group(0) if match else None


def says_not_found(text: str) -> bool:
    return bool(_SAYS_NOT_FOUND.search(text)) or text.strip().casefold() == NOT_FOUND_SHORT


def abstention(question: str, sources: list[Source], why: str) -> str:
    """What the documents hold and what they do not, inventing nothing."""
    found = "; ".join(f"“{(s.title or s.reference)}”" for s in sources[:3]) or "nothing"
    return (
        f"Not found in the documents: {why}. What was found: {found}. "
        f"What is missing: a passage that states the answer to “{question.strip()}”."
    )


def check_answer(
    question: str,
    written: str,
    sources: list[Source],
    extracted: str = "",
    decided: Decision | None = None,
    rewritten: str | None = None,
    hop_answers: Sequence[tuple[str, str]] = (),
) -> CheckedAnswer:
    """The answer as returned: short answer split off (or cut from the first sentence), a computed
    comparison where the question asks one, the grounding check, citations on every claim.
    `extracted`: the words the extraction call copied from a passage (agent/extract.py); when
    usable they are the short answer, and the explanation is checked against them. `decided`: an
    answer computed from the question's parts (agent/both.py), which stands over the model's own.
    `rewritten`: the question its bridge hops rewrote (agent/bridge.py), whose names the answer may
    be linked to as well as the question's own; `hop_answers`: each hop asked and its answer, which
    is not the question's (`answers_a_hop`)."""
    texts = [source.text for source in sources]
    missing = unanswerable_reason(question, sources)
    if missing:
        return abstain(question, sources, missing)
    short, explanation = split_short_answer(written)
    explanation = without_passage_names(_without_own_source_list(explanation))
    first = split_sentences(explanation)[:1]
    if (short is not None and says_not_found(short)) or (short is None and first and says_not_found(first[0])):
        return abstain(question, sources, "the model found no passage that states it")
    if short is None or len(short.split()) > 5:  # none, or a sentence restating the question
        short = short_from_sentence("\n".join(part for part in (short, explanation) if part), question)
    computed = compare(question, sources)
    titles = [source.title or "" for source in sources]
    extracted = "" if answers_a_hop(extracted, question, hop_answers) else _item_explained(extracted, explanation)
    answered_hop = answers_a_hop(short, question, hop_answers)
    if (
        computed is None
        and usable_extraction(extracted, question, titles, texts)
        and not _narrower(short, extracted)
        and (decided or not _own_yes_or_no(short, question))
    ):
        short = extracted
        if not set(content_words(short)) <= set(content_words(explanation)):  # it explained another answer
            explanation = _evidence(short, texts) or explanation
    elif computed is None and (
        answered_hop
        or not (
            (fits_original := fits_question(short, question, sources))
            and (not rewritten or fits_question(short, rewritten, sources))
        )
    ):
        # it fit the question (only the rewritten one's words were its fault), or is a hop's answer
        again = bool(answered_hop) or fits_original
        short, refusal = _recut(short, explanation, sources, [question, rewritten or ""], answered_hop, again)
        if refusal:
            return abstain(question, sources, refusal)
    pair = choices(question) if computed is None else None
    chosen = _one_choice(pair, [short, extracted], [*split_sentences(explanation)[:1], explanation]) if pair else None
    if chosen:  # "Which singer is American, Mark King or Nick Hexum?" is answered by a name, not "American"
        short = chosen
    if computed is not None:  # the model's arithmetic is replaced; its conclusion dropped when it differs
        agrees = computed.winner.casefold() in short.casefold()
        explanation = f"{explanation}\n\n{computed.sentence()}" if agrees else computed.sentence()
        short = computed.winner
    if decided:  # what each part was answered decides; the model's explanation follows
        explanation = f"{decided.sentence}\n\n{explanation}"
    if short and not set(content_words(short)) <= set(content_words(explanation)):
        explanation = f"{short}.\n\n{explanation}".strip()  # the explanation must state the answer it explains
    subjects = list(dict.fromkeys([*named_subjects(question), *named_subjects(rewritten or "")]))
    asks_a_name = computed is None and not pair and not decided and answer_kind(question) != "yes or no"
    both_questions = f"{question}\n{rewritten or ''}"
    refusal = _unsupported(short, sources, question, both_questions, subjects if asks_a_name else None)
    if refusal:
        return abstain(question, sources, refusal)
    cited, claims = attribute(
        explanation, citable(short, subjects, sources, both_questions) if asks_a_name else sources, question
    )
    if claims and not any(claim.supported for claim in claims):
        return abstain(question, sources, "no sentence of the answer is supported by a passage")
    return CheckedAnswer(cited + unanswered_parts_note(question, sources), short, claims)


def _recut(
    short: str, explanation: str, sources: list[Source], asked: list[str], answered_hop: str | None, again: bool
) -> tuple[str, str | None]:
    """(a short answer cut from the explanation, or why there is none) for a short answer that
    cannot answer: a label, the question's name, no number where one is asked; or a hop's answer
    again ("Austria" for "Who was in charge of the country where the composer of Aschenbrodel was
    a citizen?"). `asked`: the question and the rewritten one; `answered_hop`: the hop question
    `short` answers; `again`: `short` answered a hop, so the recut must name something new."""
    question = asked[0]
    unlabelled = _without_labels(explanation, sources)
    if answered_hop:  # the hop's question and answer are not given back again
        asked = [*asked, answered_hop, short]
    asked_words = " ".join(asked)
    recut = typed_short(question, unlabelled) or short_from_sentence(unlabelled, asked_words)
    if again and not _names_something(recut, asked_words):  # "son" of "his son C. P. E. Bach"
        return recut, f"the answer “{short}” answers the hop, not the question"
    if not recut:  # the model gave back a source's label and nothing else
        return recut, "the model named a source but no answer"
    return recut, None


def _unsupported(
    short: str, sources: list[Source], question: str, asked: str, subjects: list[str] | None
) -> str | None:
    """Why `short` cannot be given, or None: it is in no passage read; or, for a question asking a
    name (`subjects`: its names, None for yes/no, choices and computed answers), it names one
    institution where a kind is asked, or no passage holding it is linked to the question
    (`linked_to_question`; `asked`: the question and the rewritten one)."""
    if not grounded_in(short, [source.text for source in sources]):
        return f"the answer “{short}” is not in any passage read"
    if subjects is None:
        return None
    if institution := names_one_institution(short, question):
        return f"“{short}” names one {institution}, not a kind of {institution}"
    if not linked_to_question(short, subjects, sources, asked):
        return f"no passage holding “{short}” is about {' or '.join(subjects)}"
    return None


def _names_something(short: str, asked: str) -> bool:
    """Whether a recut short answer holds a name or a number `asked` does not: what is left beside
    a hop's answer must have to answer the question ("Karl Renner", not "son")."""
    known = set(content_words(asked))
    return any(set(content_words(word)) - known for word in short.split() if word[:1].isupper() or word[:1].isdigit())


def _one_choice(pair: tuple[str, str], answers: list[str], explanations: list[str]) -> str | None:
    """The one choice of an "A or B?" question the answer names: the short answers first (the one
    named first where one names both: "Cotula is larger than Pterocarya"), then the explanation's
    first sentence, then all of it, where it names exactly one; None when nothing names just one."""
    for text, first_of_both in [*((answer, True) for answer in answers), *((text, False) for text in explanations)]:
        said = content_words(text)
        positions = {}
        for choice in pair:
            words = content_words(choice)
            if words and set(words) <= set(said):
                positions[choice] = said.index(words[0])
        if len(positions) == 1 or (positions and first_of_both):
            return min(positions, key=lambda choice: positions[choice])
    return None


def _item_explained(extracted: str, explanation: str) -> str:
    """Of an extraction that lists several ("Halvorsen Energy Lab, Tomas Eriksen"), the one item the
    explanation's first sentence states ("Tomas Eriksen led the Aurora Cell"); else it unchanged."""
    items = [item.strip() for item in re.split(r"[,;]", extracted) if item.strip()]
    first = split_sentences(strip_citations(explanation))[:1]
    if len(items) < 2 or not first:
        return extracted
    said = set(content_words(first[0]))
    stated = [item for item in items if set(content_words(item)) and set(content_words(item)) <= said]
    return stated[0] if len(stated) == 1 else extracted


def _own_yes_or_no(own: str, question: str) -> bool:
    """Whether the model already answered a yes/no question with yes or no. Its own answer stands:
    it was written after reading every passage, while the extraction's four-passage "yes" was
    wrong where the model's "no" was right (issue 30's 1.5B run, HotpotQA "no" question)."""
    first = own.split()[:1]
    return answer_kind(question) == "yes or no" and bool(first) and first[0].strip(",.!").casefold() in {"yes", "no"}


def _narrower(own: str, extracted: str) -> bool:
    """Whether the model's own short answer is a part of the extracted one ("Tomas Eriksen" of
    "Halvorsen Energy Lab, Tomas Eriksen"): the extraction then only added names, and the 0.5B
    lists the lab beside the engineer asked for."""
    mine = set(content_words(own))
    return bool(mine) and mine < set(content_words(extracted))


def _evidence(short: str, texts: list[str]) -> str:
    """The explanation written around an extracted answer the model's explanation does not state:
    the answer, then the first passage sentence that holds its words (cited by attribution)."""
    wanted = set(content_words(short))
    for text in texts:
        for sentence in split_sentences(text):
            if wanted <= set(content_words(sentence)):
                return f"{short}. {sentence.strip()}"
    return ""


_PARTS = re.compile(r",?\s+and\s+(?=(?:who|what|when|where|which|how|why)\b)|;\s*", re.I)


def question_parts(question: str) -> list[str]:
    """The questions a question asks: "When did X erupt, and who designed Y?" asks two."""
    return [part for part in _PARTS.split(question) if part.strip()]


def unanswerable_reason(question: str, sources: list[Source]) -> str | None:
    """Why the sources cannot answer the question before any LLM call: every part of it asks about
    a name no passage mentions (the Faroe Islands, in documents about a battery), else None."""
    texts = [source.text for source in sources]
    missing = [unmentioned_subjects(part, texts) for part in question_parts(question)]
    if not all(missing):
        return None
    names = list(dict.fromkeys(name for names in missing for name in names))
    return f"no passage read mentions {' or '.join(names)}"


def unanswered_parts_note(question: str, sources: list[Source]) -> str:
    """For a question with several parts, the names of the parts the passages never mention."""
    texts = [source.text for source in sources]
    names = [name for part in question_parts(question) for name in unmentioned_subjects(part, texts)]
    return f"\n\nNot found in the documents: anything about {' or '.join(dict.fromkeys(names))}." if names else ""


def abstain(question: str, sources: list[Source], why: str) -> CheckedAnswer:
    """The abstention: what was found and what is missing; no source marked cited."""
    for source in sources:
        source.cited = False
    return CheckedAnswer(abstention(question, sources, why), NOT_FOUND_SHORT, [], abstained=True)
