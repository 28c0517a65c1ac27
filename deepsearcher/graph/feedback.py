"""A second, keyword search for the names the first search's best chunks give (pseudo-relevance feedback).

The graph follows a name only to a chunk *titled* by it. MuSiQue's second hops are often
chunks that only *mention* the bridge: "the state where Henry Worrall died" is Kansas (his
page says so), and the answer is in "Kansas's congressional districts"; the director found on
one page is named, not titled, on the next ("History of Mississippi", "Alcohol laws of Indiana",
"South Korea at the Olympics"). So a BM25 search for the question plus the names its best
chunks mention (the names the question does not hold) finds the chunk where the bridge name
meets the question's own words, and its list is fused into the walk's by reciprocal rank with a
smaller weight: a chunk both lists hold moves up, one only the feedback finds may enter below.

Keyword, not dense: it needs no embedding model in the store (a store never embeds), and on
the tuning half it beat a dense or hybrid second search (benchmarks/retrieval.py, `--feedback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from deepsearcher.graph.follow_up import follow_up_queries
from deepsearcher.graph.links import best_scored
from deepsearcher.types import RetrievalResult

#: Runs a keyword (BM25) search for the given text: its hits, best first.
KeywordSearch = Callable[[str], Sequence[RetrievalResult]]


@dataclass(frozen=True)
class FeedbackSettings:
    """Chosen on questions 50-99 of the shared MuSiQue and HotpotQA samples (benchmarks/retrieval.py)."""

    #: Best chunks of the walked list whose names are added to the question.
    seeds: int = 3
    #: Names added, at most, in the order those chunks mention them.
    names: int = 8
    #: What a rank in the feedback list counts, against 1 for the same rank in the walked list.
    weight: float = 0.3
    rank_k: int = 10


def feedback_names(question: str, hits: Sequence[RetrievalResult], settings: FeedbackSettings) -> list[str]:
    """Names the first `seeds` hits mention that the question does not, nor the hit's own title
    (the names DeepSearch's next round searches too, `follow_up.follow_up_queries`)."""
    return follow_up_queries(question, hits[: settings.seeds], (), settings.names)


def with_feedback(
    question: str,
    walked: Sequence[RetrievalResult],
    search: KeywordSearch,
    top_k: int,
    settings: FeedbackSettings | None = None,
) -> list[RetrievalResult]:
    """`walked` (best first) fused with a keyword search for the question and the names its best
    chunks give; the best `top_k`, each with its fused score. No such name, or the same `top_k`
    in the same order: `walked` as it is (its scores too)."""
    settings = settings or FeedbackSettings()
    names = feedback_names(question, walked, settings)
    if not names:
        return list(walked[:top_k])
    found = search(f"{question} {' '.join(names)}")
    scores: dict[tuple[str, str], float] = {}
    results: dict[tuple[str, str], RetrievalResult] = {}
    for weight, hits in ((1.0, walked), (settings.weight, found)):
        for rank, hit in enumerate(hits):
            key = (hit.reference, hit.text)
            results.setdefault(key, hit)  # the walked hit first: it keeps its search rank
            scores[key] = scores.get(key, 0.0) + weight / (settings.rank_k + rank)
    order = sorted(scores, key=lambda key: -scores[key])[:top_k]
    if order == [(hit.reference, hit.text) for hit in walked[:top_k]]:
        return list(walked[:top_k])
    return best_scored(scores, results, top_k)
