"""Sources as documents, and every answer sentence tied to the source that supports it.

Small local models rarely write `[n]` (issue 30: 0 of 8 answers had one). So after the answer is
written, each sentence keeps the model's citation when it points at a source that shares its
words, and is otherwise attributed after the fact to the source whose passage holds most of its
content words; a sentence no passage supports is marked. The overlap is lexical (content words,
numbers kept): what a reader can check by looking at the quoted passage.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from deepsearcher.agent.result import Source, location
from deepsearcher.graph.entities import mentions
from deepsearcher.types import RetrievalResult

#: Share of a sentence's content words a passage must hold to support it.
SUPPORT_THRESHOLD = 0.5
#: Fewer content words than this ("Yes."): nothing to cite.
MIN_CLAIM_WORDS = 1
UNSUPPORTED_MARK = "[unsupported]"

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: "Confederation's": the possessive "s" is no word of its own, at a sentence's end too (issue 30:
#: "Confederation's" was taken for an answer because its "s" is not among the question's words)
_POSSESSIVE_S = re.compile(r"['’]s\b")
_CITATION = re.compile(r"\s*\[(\d+(?:\s*,\s*\d+)*)\]")
#: A sentence ends at . ! ? (and the citations right after), not after "Mr." or an initial ("G. Stanley Hall").
_SENTENCE_END = re.compile(
    r"(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bJr\.)(?<!\bSr\.)(?<!\bvs\.)(?<!\bMrs\.)(?<!\bNo\.)"
    r"(?<=[.!?])((?:\s*\[\d+(?:\s*,\s*\d+)*\])*)\s+|\n+"
)
_STOPWORDS = frozenset(
    """a an the and or but if of in on at to for from by with about as into over after before under
    is are was were be been being has have had do does did it its this that these those there their
    they them he she his her him we our you your i me my which who whom whose what when where why how
    not no so than then also can could would should will shall may might must very more most such
    only just both each any all some other one according source sources passage passages document
    documents answer question based provided information yes""".split()
)


def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` that carry meaning (numbers included, stop words out)."""
    bare = _POSSESSIVE_S.sub("", text.casefold())
    plain = unicodedata.normalize("NFKD", bare).encode("ascii", "ignore").decode()
    return [word for word in _WORD.findall(plain) if word not in _STOPWORDS]


@dataclass
class Claim:
    """One sentence of the answer and the sources that support it (empty: unsupported)."""

    text: str
    citations: list[int] = field(default_factory=list)
    how: str = "none"  # "model": the model's own [n]; "attributed": added after the fact; "none"

    @property
    def supported(self) -> bool:
        return bool(self.citations)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "citations": self.citations, "supported": self.supported, "how": self.how}


def group_sources(results: list[RetrievalResult], passage_text: Any = None) -> list[Source]:
    """One source per document (`reference`, and `title` where records of one file have their own,
    as in a JSONL corpus): its chunks merged, numbered [1..n] in the order of each document's
    best-ranked chunk. `passage_text(result)` is what the LLM reads of a chunk."""
    read = passage_text or (lambda result: result.text)
    sources: dict[tuple[str, str | None], Source] = {}
    for result in results:
        key = (result.reference, result.title)
        source = sources.get(key)
        if source is None:
            source = Source(
                index=len(sources) + 1,
                reference=result.reference,
                text="",
                title=result.title,
                fetched_at=result.metadata.get("fetched_at"),  # a web page's fetch time, shown beside it
            )
            sources[key] = source
        source.passages.append(
            {
                "text": read(result),
                "page": _page(result.metadata.get("page")),
                "section": str(result.metadata.get("section") or "") or None,
            }
        )
    for source in sources.values():
        source.text = "\n\n".join(passage["text"] for passage in source.passages)
        source.page, source.section = source.passages[0]["page"], source.passages[0]["section"]
    return list(sources.values())


def source_label(source: Source) -> str:
    """What the LLM is shown of a source besides its text: title (or reference), page or section."""
    return ", ".join(part for part in (source.title or source.reference, location(source)) if part)


def _page(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _pieces(text: str) -> list[tuple[str, str]]:
    """(sentence with the citations written right after it, the whitespace that follows it)."""
    pieces: list[tuple[str, str]] = []
    last = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.start() + len(match.group(1) or "")
        pieces.append((text[last:end], text[end : match.end()]))
        last = match.end()
    pieces.append((text[last:], ""))
    return [(sentence, gap) for sentence, gap in pieces if sentence.strip()]


def strip_citations(text: str) -> str:
    """`text` without its citation markers ([1], [2, 3]): what a short answer or a scored answer is."""
    return _CITATION.sub("", text).strip()


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, each with the citations written right after it."""
    return [sentence.strip() for sentence, _ in _pieces(text)]


def _support(words: list[str], novel: set[str], passage_words: set[str]) -> float:
    """Share of the sentence's content words in the passage; 0 when the sentence says something
    beyond the question (`novel` words) and the passage holds none of it."""
    if not words:
        return 0.0
    if novel and not novel & passage_words:
        return 0.0
    return sum(1 for word in words if word in passage_words) / len(words)


def _holds_up(score: float, top: float) -> bool:
    """Whether the model's own [n] stands: its passage supports the sentence, and not far less than
    the best passage does. Why: the 1.5B cited the page on Richard Bach's novel for "…in the hand of
    his son Carl Philipp Emanuel Bach [1]", the one word "Bach" in common (issue 30's run)."""
    return score > 0 and (score >= SUPPORT_THRESHOLD or score * 2 >= top)


def _best_passage(words: list[str], novel: set[str], source: Source) -> tuple[float, dict[str, Any] | None]:
    best: tuple[float, dict[str, Any] | None] = (0.0, None)
    for passage in source.passages:
        score = _support(words, novel, set(content_words(passage["text"])))
        if score > best[0]:
            best = (score, passage)
    return best


def attribute(answer: str, sources: list[Source], question: str = "") -> tuple[str, list[Claim]]:
    """(the answer with a citation on every supported sentence and unsupported ones marked, its
    claims). Each cited source gets its supporting quote, page and section."""
    by_index = {source.index: source for source in sources}
    asked = set(content_words(question))
    rebuilt: list[str] = []
    claims: list[Claim] = []
    for sentence, gap in _pieces(answer.strip()):
        given = [int(n) for group in _CITATION.findall(sentence) for n in re.split(r"\s*,\s*", group)]
        bare = _CITATION.sub("", sentence).strip()
        words = content_words(bare)
        if len(words) < MIN_CLAIM_WORDS or bare.lstrip().startswith("#") or bare.endswith(":"):
            rebuilt.append(sentence + gap)
            continue
        novel = set(words) - asked
        scored = {index: _best_passage(words, novel, source) for index, source in by_index.items()}
        top = max((score for score, _ in scored.values()), default=0.0)
        valid = [n for n in dict.fromkeys(given) if n in by_index and _holds_up(scored[n][0], top)]
        claim = Claim(bare)
        if valid:
            claim.citations, claim.how = valid, "model"
        else:
            best = max(scored, key=lambda n: scored[n][0], default=None)
            if best is not None and scored[best][0] >= SUPPORT_THRESHOLD:
                claim.citations, claim.how = [best], "attributed"
        for index in claim.citations:
            _quote(by_index[index], words, scored[index][1])
        claims.append(claim)
        written_as_is = claim.how == "model" and valid == list(dict.fromkeys(given))  # every [n] it wrote holds
        rebuilt.append((sentence.strip() if written_as_is else _with_citations(bare, claim)) + gap)
    return "".join(rebuilt).strip(), claims


def _with_citations(sentence: str, claim: Claim) -> str:
    marker = f"[{', '.join(str(n) for n in claim.citations)}]" if claim.citations else UNSUPPORTED_MARK
    stripped = sentence.rstrip()
    if stripped and stripped[-1] in ".!?:;":
        return f"{stripped[:-1]} {marker}{stripped[-1]}"
    return f"{stripped} {marker}"


def _quote(source: Source, words: list[str], passage: dict[str, Any] | None) -> None:
    """Mark `source` cited and give it the sentence of `passage` that best supports the claim."""
    source.cited = True
    if passage is None or source.quote:
        return
    wanted = set(words)
    sentences = split_sentences(passage["text"]) or [passage["text"]]
    best = max(sentences, key=lambda s: len(wanted & set(content_words(s))))
    source.quote = best.strip()
    source.page, source.section = passage["page"], passage["section"]


def grounded_in(short_answer: str, texts: list[str]) -> bool:
    """Whether the names, dates and numbers of `short_answer` are in `texts`: every number; both
    words of a name of one or two capitalised words, two thirds of a longer one's. A two-word name
    is not grounded by its generic word alone (issue 30: "Squamish River" stood as a hop's answer
    because a page about another river holds "River"); a long title may be worded a little
    differently. A yes/no answer has no names and passes."""
    haystack = set(content_words(" ".join(texts)))
    numbers = [word for word in _WORD.findall(short_answer) if word.isdigit()]
    if any(number not in haystack for number in numbers):
        return False
    names = [name for word in _WORD.findall(short_answer) if word[:1].isupper() for name in content_words(word)]
    found = sum(name in haystack for name in names)
    return found == len(names) if len(names) <= 2 else found * 3 >= len(names) * 2


#: A question's opening verb, capitalised only because it opens the question ("Did", "Has").
_OPENERS = re.compile(r"^\s*(?:did|do|does|has|have|had|can|could|would|should|will|name|list)\b\s*", re.IGNORECASE)


#: "Varngard Ostermere's" is the name "Varngard Ostermere": the "s" left of the possessive is in
#: every English passage, so a name no document mentions counted as mentioned (issue 30: DeepSearch
#: answered a generated unanswerable question about a made-up footballer's team)
_POSSESSIVE_END = re.compile(r"['’]s?$")


def named_subjects(question: str) -> list[str]:
    """The names a question asks about ("Faroe Islands", "Lothair II"): the entity graph's own
    heuristic (graph.entities.mentions), one for links, follow-up searches and abstention."""
    body = _OPENERS.sub("", question, count=1).strip()
    names = [_POSSESSIVE_END.sub("", _without_opening(name, body)) for name in mentions(body)]
    return [
        name for name in dict.fromkeys(names) if name and any(word not in _STOPWORDS for word in content_words(name))
    ]


def _without_opening(name: str, body: str) -> str:
    """`name` without the question's first word when that word is capitalised only because it opens
    the question ("Besides the continent…" -> no name; "Besides the Aurora Cell…" -> "Aurora Cell").
    A name that opens the question itself ("Faroe Islands population…") is kept whole."""
    opening = body.split(maxsplit=1)[0] if body else ""
    if name == opening:
        return "" if body.count(name) == 1 else name
    joined = re.match(rf"{re.escape(opening)}\s+(?:the|a|an)\s+(.+)", name)
    return joined.group(1) if joined and body.startswith(name) else name


#: the ending of an adjective named after a place ("European", "Italian", "Swedish", "Japanese")
_OF_A_PLACE = re.compile(r"^(?P<root>\w{4,}?)(?:ean|ian|an|ish|ese)$")


def mentions_name(text: str, name: str) -> bool:
    """Whether `text` mentions `name`: one of its words is there (a surname, one word of a title).
    A one-word name of a place's adjective is mentioned by its place: a page on Europe mentions
    "European" (issue 30: "… held in a European country" was "not found" for want of the word).
    The one rule abstention, follow-up searches and DeepSearch's naming passages share."""
    words = content_words(name)
    said = set(content_words(text))
    if set(words) & said:
        return True
    place = _OF_A_PLACE.match(words[0]) if len(words) == 1 else None
    return place is not None and any(word.startswith(place["root"]) for word in said)


def holds_name(text: str, name: str) -> bool:
    """Whether `text` holds every word of `name` ("Tekeze River", not just "River"), or the name
    with its first word an initial ("J. Strauss II" holds "Johann Strauss II"): stricter than
    `mentions_name`, for deciding what a passage is about."""
    return set(content_words(name)) <= set(content_words(text)) or holds_name_closely(text, name, between=0)


def holds_name_closely(text: str, name: str, between: int = 2) -> bool:
    """Whether `text` holds `name`'s words in order with at most `between` other words between
    each two (a middle name: "Francis Michael Durango Magalona" holds "Francis Magalona"), its
    first word maybe an initial: "drivers" before "World Rally Championship" is not the World
    Drivers' Championship, as `holds_name` (every word, anywhere) would have it."""
    wanted = content_words(name)
    said = content_words(text)
    if not wanted:
        return False
    firsts = {wanted[0], wanted[0][0]} if len(wanted) > 1 else {wanted[0]}
    for start, word in enumerate(said):
        if word not in firsts:
            continue
        at, found = start, True
        for step, next_word in enumerate(wanted[1:]):
            gap = 0 if step == 0 and word != wanted[0] else between  # an initial stands right before the name
            window = said[at + 1 : at + 2 + gap]
            if next_word not in window:
                found = False
                break
            at += 1 + window.index(next_word)
        if found:
            return True
    return False


def naming_first(results: list[RetrievalResult], names: list[str]) -> list[RetrievalResult]:
    """`results` with those about every one of `names` first: holding them whole (`holds_name`) in
    the title, then in the text; then mentioning a word of each (`mentions_name`) in the title,
    then in the text; search order kept within each. A small model answers from the first
    passages it reads, and a part of a question is about its own names: a page on the Squamish
    River, sharing only "River" with "the river which the Tekeze River turns into", came before
    the Atbarah's, which names the Tekeze."""
    if not names:
        return list(results)

    def rank(result: RetrievalResult) -> int:
        tries = [(held, part) for held in (holds_name, mentions_name) for part in (result.title or "", result.text)]
        passed = (at for at, (held, part) in enumerate(tries) if all(held(part, name) for name in names))
        return next(passed, len(tries))

    return sorted(results, key=rank)


def unmentioned_subjects(question: str, texts: list[str]) -> list[str]:
    """The question's names of which no word is in `texts`: what the documents never mention."""
    haystack = " ".join(texts)
    return [name for name in named_subjects(question) if not mentions_name(haystack, name)]


def named_nowhere(question: str, texts: list[str]) -> str | None:
    """Why no passage retrieved can answer: not one of the question's names is in any of them (the
    answer check would then abstain before any LLM call), else None."""
    names = named_subjects(question)
    if not names or unmentioned_subjects(question, texts) != names:
        return None
    return f"no passage retrieved mentions {' or '.join(names)}"
