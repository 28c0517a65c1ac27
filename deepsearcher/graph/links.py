"""One step over the entity graph: a search's top chunks pass score to the chunks they name.

Nodes are chunks; a chunk that mentions a name links to the chunks titled by it (title:
the `title` metadata every loader sets: a page's, a document's, a passage's). Nothing is
stored besides what each row already holds, so the graph is exact after any incremental
load, replacement or delete, and a collection loaded before this existed has it too.

Scores are reciprocal ranks, as in RRF: the search's own list gives 1 / (k + rank); each of
the first `seeds` hits gives `link_weight / (k + its rank)` to the chunk titled by each name it
mentions that the question does not, and a name in the question gives `question_weight / k`
to the chunk it titles. A chunk is never pushed down by this, only others up; a linked chunk
enters the list only with a seed's support. A search where no name leads to a chunk keeps
the store's order and scores; otherwise each score is the fused reciprocal-rank score.
The weights were chosen on the shared HotpotQA and MuSiQue train samples
(benchmarks/retrieval.py prints the sweep).
The agents read the chosen chunks back in the store's own order (`in_search_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from deepsearcher.graph.entities import mentions, normalise, title_key
from deepsearcher.types import RetrievalResult

#: Looks up chunks by title: given names as written, the chunks titled by one of them, best first.
TitleLookup = Callable[[list[str]], Sequence[RetrievalResult]]


@dataclass(frozen=True)
class LinkSettings:
    """How far the search's scores spread (see the module docstring)."""

    seeds: int = 3
    link_weight: float = 0.5
    question_weight: float = 0.3
    rank_k: int = 10
    #: Names looked up per search, at most (the seeds' first ones, then the question's).
    max_names: int = 24


def _key(result: RetrievalResult) -> tuple[str, str]:
    return result.reference, result.text


def _wanted(question: str, hits: Sequence[RetrievalResult], settings: LinkSettings) -> dict[str, tuple[str, float]]:
    """Key of each name to follow -> (the name as written, the score it passes on)."""
    asked = {normalise(name): name for name in mentions(question)}
    wanted: dict[str, tuple[str, float]] = {}
    for rank, hit in enumerate(hits[: settings.seeds]):
        own = title_key(hit.title or "")
        for name in mentions(hit.text):
            key = normalise(name)
            if key in asked or key == own:
                continue
            written, score = wanted.get(key, (name, 0.0))
            wanted[key] = (written, score + settings.link_weight / (settings.rank_k + rank))
    for key, name in asked.items():
        if settings.question_weight > 0:
            written, score = wanted.get(key, (name, 0.0))
            wanted[key] = (written, score + settings.question_weight / settings.rank_k)
    return dict(list(wanted.items())[: settings.max_names])


def follow_links(
    question: str,
    hits: Sequence[RetrievalResult],
    lookup: TitleLookup,
    top_k: int,
    settings: LinkSettings | None = None,
) -> list[RetrievalResult]:
    """`hits` (the search's list, best first) re-ranked with the chunks they link to; the
    best `top_k`, each with its fused score."""
    settings = settings or LinkSettings()
    wanted = _wanted(question, hits, settings) if hits else {}
    if not wanted:
        return list(hits[:top_k])
    scores: dict[tuple[str, str], float] = {}
    results: dict[tuple[str, str], RetrievalResult] = {}
    best_of_title: dict[str, tuple[str, str]] = {}
    for rank, hit in enumerate(hits):
        key = _key(hit)
        hit.search_rank = rank
        results.setdefault(key, hit)
        scores[key] = scores.get(key, 0.0) + 1.0 / (settings.rank_k + rank)
        best_of_title.setdefault(title_key(hit.title or ""), key)
    for found in lookup([name for name, _ in wanted.values()]):
        title = title_key(found.title or "")
        if title in wanted and title not in best_of_title:
            best_of_title[title] = _key(found)
            results.setdefault(_key(found), found)
    linked = [title for title in wanted if title in best_of_title]
    if not linked:
        return list(hits[:top_k])  # nothing to follow: the search's own order and scores
    for title in linked:
        key = best_of_title[title]
        scores[key] = scores.get(key, 0.0) + wanted[title][1]
    return best_scored(scores, results, top_k)


def best_scored(
    scores: dict[tuple[str, str], float], results: dict[tuple[str, str], RetrievalResult], top_k: int
) -> list[RetrievalResult]:
    """The `top_k` results of the highest `scores`, each carrying its score."""
    fused = []
    for key in sorted(scores, key=lambda key: -scores[key])[:top_k]:
        result = results[key]
        result.score = scores[key]
        fused.append(result)
    return fused


def in_search_order(results: Sequence[RetrievalResult]) -> list[RetrievalResult]:
    """`results` (a linked search's, fused order) in the store's own order, the chunks only links
    brought in after them: links decide which chunks are read, similarity the order an LLM reads
    them in. A 0.5B model answers from the first passage it is shown; a hub chunk that other hits
    name (examples/data's Aurora Cell) moved first made it answer "Halvorsen Energy Lab" for
    "which engineer", while the store's order (the trial, the lab's history, the cell) gives Eriksen."""
    return sorted(results, key=lambda result: (result.search_rank is None, result.search_rank or 0))
