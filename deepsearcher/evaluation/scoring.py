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

__all__ = [
    "all_found",
    "distinct_titles",
    "exact_match",
    "normalize_answer",
    "recall_at_k",
    "strip_citations",
    "token_f1",
]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


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


def strip_citations(answer: str) -> str:
    """Drop the agents' citation markers ([1], [2, 3]) so they do not count as answer tokens."""
    return _CITATION.sub("", answer).strip()


def _references(answer: str | Sequence[str]) -> list[str]:
    references = [answer] if isinstance(answer, str) else list(answer)
    if not references:
        raise ValueError("at least one reference answer is needed")
    return references


def exact_match(prediction: str, answer: str | Sequence[str]) -> float:
    """1.0 when the normalised prediction equals the normalised answer or any alias, else 0.0."""
    predicted = normalize_answer(prediction)
    return max(float(predicted == normalize_answer(reference)) for reference in _references(answer))


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
    return max(_f1(prediction, reference) for reference in _references(answer))
