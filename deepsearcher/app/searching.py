"""The search use case, written once: retrieval only, no LLM. What `deepsearcher search`,
`POST /v1/search`, MCP's `search` tool and `naive_retrieve` run.

Like a query, a search with no collection named reads every collection the caller may use
that holds documents (the only one, on most stores), so a new user never has to learn a
collection's name before the first search. Each hit carries the passage of its chunk that
matches the query best, not the chunk's first characters: the line a reader looks for is
often in the middle of a 1,500-character chunk.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import Field, field_validator

from deepsearcher.agent.retriever import cap_per_document, capped_fetch
from deepsearcher.agent.searchable import searchable_collections
from deepsearcher.app.components import Components
from deepsearcher.app.requests import RequestModel, RequestName, not_blank
from deepsearcher.types import RetrievalResult, deduplicate_results

__all__ = ["MAX_TOP_K", "SearchHit", "SearchRequest", "SearchResponse", "best_passage", "search"]

#: The most hits one search may ask for (every front-end takes this bound).
MAX_TOP_K = 100
#: The longest search text or question (a page of text; embedding models read far less).
MAX_QUERY_CHARS = 20_000
#: Characters of a hit's passage.
PASSAGE_CHARS = 300

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?;:])\s+|\n+")
_STOPWORDS = frozenset(
    "a an the and or of to in on at for by with from is are was were be been it its this that these those "
    "what which who whom whose how why when where do does did my your our their me i you we they".split()
)


class SearchRequest(RequestModel):  # type: ignore[explicit-any]  # pydantic's synthesized __init__
    """What to look for; `collections` None means every loaded collection the caller may read."""

    query: str = Field(max_length=MAX_QUERY_CHARS, description="What to look for.")
    collections: list[RequestName] | None = Field(
        default=None,
        max_length=100,
        description="Search only these (default: every loaded collection the key may use).",
    )
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K, description="How many chunks.")

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        return not_blank(value)


@dataclass(frozen=True)
class SearchHit:
    """One chunk found, with the part of it that matches best and how close its meaning is.

    `similarity` is the cosine of the query's and the chunk's own vectors, whatever the ranker's
    fused `score` is; `weak` marks a hit below the model's relevance floor: the best a store holds
    for a question it has nothing about still comes first, and the reader is told so.
    """

    rank: int
    collection: str
    result: RetrievalResult
    passage: str
    similarity: float | None = None
    weak: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "collection": self.collection,
            "score": self.result.score,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "weak": self.weak,
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
    permitted = set(authorized) if authorized is not None else None
    collections = searchable_collections(
        components.vector_db, components.embedding_model.dimension, permitted, request.collections
    )
    retriever = components.retriever
    vector = components.embedding_model.embed_query(request.query)
    found: list[tuple[str, RetrievalResult]] = []
    for collection in collections:
        retriever.check_collection(collection)
        results = components.vector_db.search_data(
            collection=collection, vector=vector, top_k=capped_fetch(request.top_k), query_text=request.query
        )  # more than top_k: room for other documents under the per-document cap
        found.extend((collection, result) for result in results)
    found.sort(key=lambda item: item[1].score, reverse=True)
    where = {id(result): collection for collection, result in found}
    unique = cap_per_document(deduplicate_results(result for _, result in found), retriever.per_document, request.top_k)
    similarities = _similarities(components, vector, unique)
    floor = relevance_floor(components)
    hits = [
        SearchHit(
            rank,
            where[id(result)],
            result,
            best_passage(result.text, request.query),
            similarity,
            floor is not None and similarity < floor,
        )
        for rank, (result, similarity) in enumerate(zip(unique, similarities, strict=True), 1)
    ]
    return SearchResponse(request.query, collections, hits)


def _similarities(components: Components, query: list[float], results: list[RetrievalResult]) -> list[float]:
    """Cosine of the query's vector and each result's (the stored one when the store gave it back,
    else the chunk embedded again, all in one call)."""
    vectors: list[list[float] | None] = [_vector(result) for result in results]
    missing = [index for index, found in enumerate(vectors) if found is None]
    if missing:
        embedded = components.embedding_model.embed_documents([results[index].text for index in missing])
        for index, vector in zip(missing, embedded, strict=True):
            vectors[index] = vector
    return [_cosine(query, vector or []) for vector in vectors]


def _vector(result: RetrievalResult) -> list[float] | None:
    embedding = result.embedding
    if embedding is None or isinstance(embedding, (str, bytes)):
        return None
    values = [float(value) for value in embedding]
    return values or None


def _cosine(first: list[float], second: list[float]) -> float:
    dot = sum(a * b for a, b in zip(first, second, strict=False))
    norms = math.sqrt(sum(a * a for a in first)) * math.sqrt(sum(b * b for b in second))
    return dot / norms if norms else 0.0


#: Below these cosines a hit is marked weak, per bundled model (benchmarks/weak_matches.py measured
#: them: the similarity under which few answerable questions' best hits fall, and most of those
#: the corpus cannot answer). A model not listed gets no mark unless query_settings.relevance_floor sets one.
RELEVANCE_FLOORS: dict[str, float] = {"all-MiniLM-L6-v2": 0.40, "multilingual-e5-small": 0.845}


def relevance_floor(components: Components) -> float | None:
    """query_settings.relevance_floor, else the measured floor of the configured model, else None."""
    configured = components.query_settings.get("relevance_floor")
    if configured is not None:
        return float(configured)
    return RELEVANCE_FLOORS.get(components.embedding_model.model_name or "")


def _terms(text: str) -> set[str]:
    """Words worth matching: lowercase words without stopwords; CJK runs cut into words by jieba
    (there is no space between words to cut at), one-character words left out."""
    terms: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            terms.update(part for part in _cjk_words(word) if len(part) > 1)
        elif word not in _STOPWORDS and len(word) > 1:
            terms.add(word)
    return terms


def _cjk_words(text: str) -> list[str]:
    import jieba

    jieba.setLogLevel(logging.WARNING)  # it logs the dictionary loading to stderr at DEBUG
    return list(jieba.lcut_for_search(text))


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
