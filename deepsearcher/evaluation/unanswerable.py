"""An unanswerable split generated from a dataset: its own questions about an entity the corpus
never mentions, so an agent that answers them invented the answer.

Each question that names one of its gold titles gets that name replaced by a made-up one
(checked absent from the corpus); yes/no questions are left out (a "no" would be right by
chance). Deterministic: the same dataset gives the same questions.
"""

from __future__ import annotations

import itertools

from deepsearcher.evaluation.dataset import Dataset, Question

__all__ = ["UNANSWERABLE_PREFIX", "invented_names", "unanswerable_questions"]

UNANSWERABLE_PREFIX = "unanswerable-"
_FIRST = ("Varn", "Quel", "Oster", "Brin", "Tessa", "Morv", "Kess", "Ulmar", "Dravo", "Fenn", "Yoral", "Zeph")
_LAST = ("holt", "mere", "wick", "dane", "stadt", "ford", "lund", "vik", "gard", "bury")


def invented_names(corpus_text: str) -> list[str]:
    """Two-part made-up names ("Varnholt Quelmere") that no corpus passage holds, in a fixed order."""
    parts = [first + last for first, last in itertools.product(_FIRST, _LAST)]
    names = [f"{a} {b}" for a, b in zip(parts, parts[len(_LAST) + 3 :], strict=False)]
    lowered = corpus_text.casefold()
    return [name for name in names if not any(part.casefold() in lowered for part in name.split())]


def unanswerable_questions(dataset: Dataset, count: int) -> list[Question]:
    """Up to `count` questions, taken from the end of the dataset (away from a `--limit` prefix)."""
    corpus_text = "\n".join(f"{passage.title}\n{passage.text}" for passage in dataset.corpus())
    names = iter(invented_names(corpus_text))
    made: list[Question] = []
    for question in reversed(dataset.questions):
        if len(made) >= count:
            break
        if question.answer.strip().casefold() in {"yes", "no"}:
            continue
        title = next((t for t in sorted(question.gold_titles, key=len, reverse=True) if t in question.question), None)
        name = next(names, None) if title else None
        if title is None or name is None:
            continue
        made.append(
            Question(
                id=f"{UNANSWERABLE_PREFIX}{question.id}",
                question=question.question.replace(title, name),
                answer="not found",
                gold_titles=(name,),
            )
        )
    return made
