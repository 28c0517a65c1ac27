"""Scores for one question: title recall of the retrieval, and exact match / token F1 of the answer.

Recall@k counts gold titles among the first k *distinct* retrieved titles, so an agent
that returns three chunks of one page is not credited for three pages. Answers are
compared after SQuAD-style normalisation (lowercase, no punctuation, no articles
a/an/the, single spaces), taking the best score over the answer and its aliases.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

from deepsearcher.agent.citations import strip_citations  # the answer path's own, so eval strips what it writes

__all__ = [
    "all_found",
    "answer_correct",
    "citation_precision",
    "citation_support",
    "is_abstention",
    "distinct_titles",
    "exact_match",
    "normalize_answer",
    "recall_at_k",
    "strip_citations",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_YES_NO = frozenset({"yes", "no"})


def distinct_titles(retrieved: Iterable[str]) -> list[str]:
    """Retrieved titles in rank order, each kept at its first (best) rank."""
    return list(dict.fromkeys(title.strip() for title in retrieved))


def _gold_set(gold: Iterable[str]) -> set[str]:
    titles = {title.strip() for title in gold}
    if not titles:
        raise ValueError("a question needs at least one gold title")
    return titles


def recall_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold titles among the first `k` distinct retrieved titles (0.0 to 1.0)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    wanted = _gold_set(gold)
    return len(wanted.intersection(distinct_titles(retrieved)[:k])) / len(wanted)


def all_found(retrieved: Sequence[str], gold: Iterable[str]) -> bool:
    """True when every gold title is somewhere in the retrieved titles."""
    return _gold_set(gold).issubset(distinct_titles(retrieved))


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lowercase, drop punctuation and articles, collapse whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _references(answer: str | Sequence[str]) -> list[str]:
    references = [answer] if isinstance(answer, str) else list(answer)
    if not references:
        raise ValueError("at least one reference answer is needed")
    return references


def _meant(answer: str | Sequence[str]) -> list[str]:
    """The answer and its aliases, without a "yes" or "no" alias of an answer that is neither:
    MuSiQue gives "NO" (the country code) for "Norway", which "no one knows" would contain."""
    references = _references(answer)
    if normalize_answer(references[0]) in _YES_NO:
        return references
    return [references[0], *(alias for alias in references[1:] if normalize_answer(alias) not in _YES_NO)]


def exact_match(prediction: str, answer: str | Sequence[str]) -> float:
    """1.0 when the normalised prediction equals the normalised answer or any alias, else 0.0."""
    predicted = normalize_answer(prediction)
    return max(float(predicted == normalize_answer(reference)) for reference in _meant(answer))


def _f1(prediction: str, reference: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    if not predicted or not expected:
        return float(predicted == expected)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, answer: str | Sequence[str]) -> float:
    """Token-overlap F1 of the normalised texts, the best over the answer and its aliases."""
    return max(_f1(prediction, reference) for reference in _meant(answer))


def answer_correct(short_answer: str, answer: str | Sequence[str], question: str = "") -> float:
    """1.0 when a normalised gold answer (or alias) is contained in the normalised short answer; for a
    comparison question ("..., A or B?") the other candidate must also be absent, so "A or B" is not
    credited. There the choice a longer gold names is an alias of it: "Nick Hexum" answers "Which
    singer is American, Mark King or Nick Hexum?" whose gold is 'Nicholas Lofton "Nick" Hexum'."""
    from deepsearcher.agent.comparison import choices

    predicted = f" {normalize_answer(short_answer)} "
    pair = choices(question) if question else None
    references = _meant(answer)
    for reference in [*references, *_choices_named(pair, references)]:
        gold = normalize_answer(reference)
        if not gold or f" {gold} " not in predicted:
            continue
        others = [normalize_answer(name) for name in pair or () if normalize_answer(name) != gold]
        if not any(other and f" {other} " in predicted for other in others):
            return 1.0
    return 0.0


def _choices_named(pair: tuple[str, str] | None, references: list[str]) -> list[str]:
    """The one choice of `pair` each gold answer names with all its words (and the other not)."""
    named = []
    for reference in references:
        words = set(normalize_answer(reference).split())
        inside = [choice for choice in pair or () if set(normalize_answer(choice).split()) <= words]
        if len(inside) == 1 and normalize_answer(inside[0]):
            named.append(inside[0])
    return named


def is_abstention(short_answer: str) -> bool:
    """Whether the agent said the documents do not hold the answer."""
    from deepsearcher.agent.grounding import says_not_found

    return not short_answer.strip() or says_not_found(short_answer)


def citation_support(cited_texts: Sequence[str], short_answer: str | None) -> float | None:
    """Share of the cited sources whose text holds the short answer given, right or wrong: whether
    each citation points at a passage stating what it is cited for (None: an abstention, nothing
    cited, or yes/no). Beside `citation_precision`, which a wrong answer's sources rarely meet."""
    if not short_answer or is_abstention(short_answer):
        return None
    return citation_precision(cited_texts, short_answer)


def citation_precision(cited_texts: Sequence[str], answer: str | Sequence[str]) -> float | None:
    """Share of the cited sources whose text holds a gold answer (None: nothing cited, or a yes/no
    answer, which no passage holds verbatim; an alias "NO" of "Norway" does not make one: `_meant`)."""
    golds = [normalize_answer(reference) for reference in _meant(answer)]
    if not cited_texts or golds[0] in _YES_NO:
        return None
    holding = sum(1 for text in cited_texts if any(gold and gold in normalize_answer(text) for gold in golds))
    return holding / len(cited_texts)
