"""Several steps over the entity graph: the hops after the first, with hub damping.

`links.follow_links` moves score one step: from the search's top hits to the chunks titled
by the names they mention. A question of three hops ("the state east of the state where
the song's performer died") needs the chunks those chunks name too. Here the score spreads
`hops` steps: a personalized PageRank truncated after `hops` terms, seeded from the search's
list (reciprocal ranks, as in RRF) and the question's names, over the directed edges
chunk -> name it mentions -> chunk titled by the name (the best such chunk, closest to the
question). Each step's mass is multiplied by `link_weight`; the graph is read from the store at
query time (each row's `title_key`), so it stays exact under any load, replacement or delete.

Hub damping: a name that many chunks of the graph mention says little about any one of
them (HippoRAG's node specificity), so what it passes on is divided by
`mentions ** hub_exponent`: a page every hit mentions does not collect every hit's score and
jump to #1 (the demo's aurora_cell.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deepsearcher.graph.entities import mentions, normalise, title_key
from deepsearcher.graph.links import LinkSettings, TitleLookup, best_scored
from deepsearcher.types import RetrievalResult

ChunkKey = tuple[str, str]


@dataclass(frozen=True)
class SpreadSettings(LinkSettings):
    """How far and how strongly the search's scores spread (see the module docstring);
    `link_weight` is the share of a chunk's score each step passes on (the damping factor)."""

    link_weight: float = 0.7
    #: Steps over the graph; each step after the first reads the chunks the last one reached.
    hops: int = 2
    #: Chunks of a step whose names the next step reads.
    expand: int = 5
    hub_exponent: float = 0.5
    #: A chunk reached from others never ranks above the best chunk it was reached from (the
    #: second hop comes after the first; its own search score still counts in full).
    after_source: bool = True


def _key(result: RetrievalResult) -> ChunkKey:
    return result.reference, result.text


class _Graph:
    """Chunks read so far, the names each mentions, and the best chunk of each title."""

    def __init__(self) -> None:
        self.chunks: dict[ChunkKey, RetrievalResult] = {}
        self.names: dict[ChunkKey, list[str]] = {}  # chunk -> keys of the names it mentions (not its own title)
        self.written: dict[str, str] = {}  # name key -> the name as first written
        self.titled: dict[str, ChunkKey] = {}  # title key -> its best chunk (the first met)

    def add(self, result: RetrievalResult) -> bool:
        key = _key(result)
        if key in self.chunks:
            return False
        self.chunks[key] = result
        own = title_key(result.title or "")
        self.titled.setdefault(own, key)
        names = []
        for name in mentions(result.text):
            name_key = normalise(name)
            if name_key != own and name_key not in names:
                names.append(name_key)
                self.written.setdefault(name_key, name)
        self.names[key] = names
        return True

    def mention_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for names in self.names.values():
            for name_key in names:
                counts[name_key] = counts.get(name_key, 0) + 1
        return counts


def _read(graph: _Graph, sources: list[ChunkKey], lookup: TitleLookup, settings: SpreadSettings) -> None:
    """Add the chunks titled by the names `sources` mention that the graph has no chunk of."""
    todo: list[str] = []
    for source in sources:
        for name_key in graph.names.get(source, []):
            if name_key not in graph.titled and graph.written[name_key] not in todo:
                todo.append(graph.written[name_key])
    todo = todo[: settings.max_names]
    for result in lookup(todo) if todo else []:
        graph.add(result)


def first_reads(question: str, hits: Sequence[RetrievalResult], settings: SpreadSettings | None = None) -> list[str]:
    """Every name the walk's first two look-ups (the question's names, then the first hop's) may
    ask for: a store that keeps what it read can fetch them in one look-up beforehand."""
    settings = settings or SpreadSettings()
    names = {normalise(name): name for name in mentions(question)}
    for hit in hits[: settings.seeds]:
        for name in mentions(hit.text):
            names.setdefault(normalise(name), name)
    return list(names.values())


def spread(
    question: str,
    hits: Sequence[RetrievalResult],
    lookup: TitleLookup,
    top_k: int,
    settings: SpreadSettings | None = None,
) -> list[RetrievalResult]:
    """`hits` (the search's list, best first) re-ranked with the chunks reached from them in
    up to `hops` steps; the best `top_k`, each with its score. A search whose names lead to no
    chunk keeps the store's order and scores."""
    settings = settings or SpreadSettings()
    graph = _Graph()
    scores: dict[ChunkKey, float] = {}
    for rank, hit in enumerate(hits):
        hit.search_rank = rank  # the order an agent reads them in (`links.in_search_order`)
        graph.add(hit)
        scores[_key(hit)] = scores.get(_key(hit), 0.0) + 1.0 / (settings.rank_k + rank)
    asked = {normalise(name): name for name in mentions(question)}
    missing = [name for key, name in asked.items() if key not in graph.titled]
    for result in lookup(missing[: settings.max_names]) if missing else []:
        graph.add(result)
    moved = False
    sources: dict[ChunkKey, list[ChunkKey]] = {}  # chunk reached -> the chunks it was reached from
    for key in asked:
        if key in graph.titled and settings.question_weight > 0:
            chunk = graph.titled[key]
            scores[chunk] = scores.get(chunk, 0.0) + settings.question_weight / settings.rank_k
            moved = True
    own = dict(scores)
    frontier = [_key(hit) for hit in hits[: settings.seeds]]
    step_mass = {key: scores[key] for key in frontier}
    for _ in range(settings.hops):
        _read(graph, frontier, lookup, settings)
        counts = graph.mention_counts()
        passed: dict[ChunkKey, float] = {}
        for source, mass in step_mass.items():
            for name_key in graph.names.get(source, []):
                target = graph.titled.get(name_key)
                if target is None or name_key in asked or target == source:
                    continue
                gain = settings.link_weight * mass / counts[name_key] ** settings.hub_exponent
                passed[target] = passed.get(target, 0.0) + gain
                sources.setdefault(target, []).append(source)
        if not passed:
            break
        moved = True
        for target, gain in passed.items():
            scores[target] = scores.get(target, 0.0) + gain
        frontier = sorted(passed, key=lambda key: -passed[key])[: settings.expand]
        step_mass = {key: passed[key] for key in frontier}
    if not moved:
        return list(hits[:top_k])  # no name leads to a chunk: the search's own order and scores
    if settings.after_source:
        for target, reached_from in sources.items():  # in the order reached: a source is settled first
            bound = max(scores[source] for source in reached_from) * (1 - 1e-6)
            scores[target] = max(own.get(target, 0.0), min(scores[target], bound))
    return best_scored(scores, graph.chunks, top_k)
