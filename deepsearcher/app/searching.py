"""The search use case, written once: retrieval only, no LLM. What `deepsearcher search`,
`POST /v1/search`, MCP's `search` tool and `naive_retrieve` run.

Like a query, a search with no collection named reads every collection the caller may use
that holds documents (the only one, on most stores), so a new user never has to learn a
collection's name before the first search. Each hit carries the passage of its chunk that
matches the query best, not the chunk's first characters: the line a reader looks for is
often in the middle of a 1,500-character chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from deepsearcher.app.collections import searchable_collections
from deepsearcher.app.components import Components
from deepsearcher.types import RetrievalResult, deduplicate_results
from deepsearcher.types.errors import BadInputError

__all__ = ["MAX_TOP_K", "SearchHit", "SearchRequest", "SearchResponse", "best_passage", "search"]

#: The most hits one search may ask for (every front-end takes this bound).
MAX_TOP_K = 100
#: Characters of a hit's passage.
PASSAGE_CHARS = 300

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SENTENCE_END = re.compile(r"(?<=[.!?;:。！？；])\s+|\n+")
_STOPWORDS = frozenset(
    "a an the and or of to in on at for by with from is are was were be been it its this that these those "
    "what which who whom whose how why when where do does did my your our their me i you we they".split()
)


@dataclass(frozen=True)
class SearchRequest:
    """What to look for; `collections` None means every loaded collection the caller may read."""

    query: str
    collections: list[str] | None = None
    top_k: int = 5

    def checked(self) -> SearchRequest:
        if not self.query or not self.query.strip():
            raise BadInputError("The search text is empty.")
        if not 1 <= int(self.top_k) <= MAX_TOP_K:
            raise BadInputError(f"top_k must be between 1 and {MAX_TOP_K}, got {self.top_k}.")
        return self


@dataclass(frozen=True)
class SearchHit:
    """One chunk found, with the part of it that matches best."""

    rank: int
    collection: str
    result: RetrievalResult
    passage: str

    def to_dict(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "collection": self.collection,
            "score": self.result.score,
            "reference": self.result.reference,
            "title": self.result.title,
            "passage": self.passage,
            "text": self.result.text,
            "metadata": self.result.metadata,
        }


@dataclass(frozen=True)
class SearchResponse:
    query: str
    collections: list[str]
    hits: list[SearchHit] = field(default_factory=list)

    @property
    def results(self) -> list[RetrievalResult]:
        return [hit.result for hit in self.hits]

    def to_dict(self) -> dict[str, object]:
        return {
            "query": self.query,
            "collections": self.collections,
            "results": [hit.to_dict() for hit in self.hits],
        }


def search(components: Components, request: SearchRequest, authorized: Iterable[str] | None = None) -> SearchResponse:
    """The best `top_k` chunks over the request's collections (one query embedding for all of them),
    best first, a chunk found in two collections shown once."""
    request = request.checked()
    permitted = set(authorized) if authorized is not None else None
    collections = searchable_collections(components, request.collections, permitted)
    retriever = components.retriever
    vector = components.embedding_model.embed_query(request.query)
    found: list[tuple[str, RetrievalResult]] = []
    for collection in collections:
        retriever.check_collection(collection)
        results = components.vector_db.search_data(
            collection=collection, vector=vector, top_k=request.top_k, query_text=request.query
        )
        found.extend((collection, result) for result in results)
    found.sort(key=lambda item: item[1].score, reverse=True)
    where = {id(result): collection for collection, result in found}
    unique = deduplicate_results(result for _, result in found)[: request.top_k]
    hits = [
        SearchHit(rank, where[id(result)], result, best_passage(result.text, request.query))
        for rank, result in enumerate(unique, 1)
    ]
    return SearchResponse(request.query, collections, hits)


def _terms(text: str) -> set[str]:
    """Words worth matching: lowercase words without stopwords; CJK text as single characters
    (a word boundary does not exist there)."""
    terms: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            terms.update(char for char in word if _CJK.match(char))
        elif word not in _STOPWORDS and len(word) > 1:
            terms.add(word)
    return terms


def best_passage(text: str, query: str, width: int = PASSAGE_CHARS) -> str:
    """The run of whole sentences of `text`, at most about `width` characters, holding the most of
    the query's words (the start of the text when none of them occurs: a purely semantic match)."""
    text = text.strip()
    if len(text) <= width:
        return text
    wanted = _terms(query)
    sentences = [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]
    best, best_score = "", 0
    for start in range(len(sentences)):
        window = sentences[start]
        for following in sentences[start + 1 :]:
            if len(window) + 1 + len(following) > width:
                break
            window = f"{window} {following}"
        score = len(wanted & _terms(window))
        if score > best_score:
            best, best_score = window, score
    if not best:
        best = sentences[0] if sentences else text
    if len(best) > width:
        best = _around_terms(best, wanted, width)
    prefix = "…" if not text.startswith(best) else ""
    suffix = "…" if not text.endswith(best) else ""
    return f"{prefix}{best}{suffix}"


def _around_terms(sentence: str, wanted: set[str], width: int) -> str:
    """`width` characters of one long sentence, centred on its first query word."""
    lowered = sentence.lower()
    positions = [lowered.find(term) for term in wanted if term in lowered]
    centre = min(positions) if positions else 0
    start = max(0, min(centre - width // 3, len(sentence) - width))
    return sentence[start : start + width].strip()
