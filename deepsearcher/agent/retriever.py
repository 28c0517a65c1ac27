"""Embed a query and search collections: the retrieval contract every agent shares.

It also enforces the embedding-model guard on the query side: a collection built
with another model would return meaningless neighbours, so it is refused by name.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import Future

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.types import (
    EmbeddingMismatchError,
    RetrievalResult,
    deduplicate_results,
)
from deepsearcher.types.errors import CollectionNotFoundError
from deepsearcher.vector_db.base import BaseVectorDB

logger = logging.getLogger(__name__)

#: Chunks of one document among a search's results, at most: one long file must not fill a
#: search's top 5 or an agent's context (the Python docs: 8 of 12 questions had all top 3 from one file).
PER_DOCUMENT = 3


def capped_fetch(top_k: int) -> int:
    """Chunks to fetch for `top_k` under the cap: enough that one long file cannot crowd out the rest."""
    return max(2 * top_k, 20)


def cap_per_document(results: Iterable[RetrievalResult], cap: int | None, limit: int) -> list[RetrievalResult]:
    """The first `limit` of `results` (best first) with at most `cap` from one document (None: no cap).

    A document is a reference and, where records of one file carry their own title (a JSONL or
    JSON corpus of articles), that title: each record is its own document, as answers cite it."""
    kept: list[RetrievalResult] = []
    counts: dict[tuple[str, str | None], int] = {}
    for result in results:
        document = (result.reference, result.title)
        if cap is not None and counts.get(document, 0) >= cap:
            continue
        counts[document] = counts.get(document, 0) + 1
        kept.append(result)
        if len(kept) >= limit:
            break
    return kept


class Retriever:
    """`embed_query` → `search_data(collection, vector, query_text)` → deduplicated results."""

    def __init__(
        self, embedding_model: BaseEmbedding, vector_db: BaseVectorDB, per_document: int | None = PER_DOCUMENT
    ) -> None:
        self.embedding_model = embedding_model
        self.vector_db = vector_db
        self.per_document = per_document
        self._checked: set[str] = set()
        self._warming: Future[None] | None = None
        self._warmed: set[str] = set()

    def check_collection(self, collection: str) -> None:
        """Refuse a collection built with another embedding model or dimension."""
        if collection in self._checked:
            return
        info = self.vector_db.get_collection_info(collection)
        if info is None:
            existing = ", ".join(c.collection_name for c in self.vector_db.list_collections()) or "none"
            raise CollectionNotFoundError(
                f"Collection '{collection}' does not exist (existing: {existing}). Load documents into it first."
            )
        model = self.embedding_model.model_name
        if info.embedding_model is None:
            logger.warning(
                "Collection '%s' records no embedding model (built by DeepSearcher or another tool): "
                "unknown model, searching it with '%s'.",
                collection,
                model,
            )
        if (info.embedding_model and model and info.embedding_model != model) or (
            info.dim and info.dim != self.embedding_model.dimension
        ):
            raise EmbeddingMismatchError(
                f"Collection '{collection}' was built with embedding model '{info.embedding_model}' ({info.dim} dims) "
                f"but the configured model is '{model}' ({self.embedding_model.dimension} dims). Configure the same "
                "model, or reload the data with --force-new-collection."
            )
        self._checked.add(collection)

    def search(
        self, query: str, collections: Iterable[str], top_k: int = 10, **store_kwargs: str
    ) -> list[RetrievalResult]:
        """Search each collection with one query embedding; results sorted by score, de-duplicated.

        `store_kwargs` (DeepSearcher's `tenant_id`, ...) go to every `search_data` call: a user's
        own store may read them. At most `per_document` chunks of one document are returned; more
        are fetched (`capped_fetch`) so the cap leaves room for other documents."""
        vector = self.embedding_model.embed_query(query)
        fetch = top_k if self.per_document is None else capped_fetch(top_k)
        names = list(collections)
        results: list[RetrievalResult] = []
        for collection in names:
            self.check_collection(collection)
            results.extend(
                self.vector_db.search_data(
                    collection=collection, vector=vector, top_k=fetch, query_text=query, **store_kwargs
                )
            )
        results.sort(key=lambda result: result.score, reverse=True)
        return cap_per_document(deduplicate_results(results), self.per_document, top_k * len(names))

    def start_warm_up(self, collections: Iterable[str], **store_kwargs: str) -> None:
        """Pay a store's one-off first-search costs now, in a thread, while the agent's first
        LLM call is in flight: Milvus Lite spends ~0.5 s on its first search in a process
        (pymilvus imports scipy, the server loads its index), which would otherwise sit on
        the critical path between the sub-query call and the judge calls. `store_kwargs` as for
        `search` (a multi-tenant store is never searched without its tenant)."""
        pending = [name for name in collections if name not in self._warmed]
        if not pending or (self._warming is not None and not self._warming.done()):
            return
        self._warmed.update(pending)
        future: Future[None] = Future()
        self._warming = future

        def warm() -> None:
            try:
                self.search("warm up", pending, top_k=1, **store_kwargs)
            except Exception as error:  # the real search meets it again and reports it
                logger.debug("Warm-up search of %s failed (the first search will report it): %s", pending, error)
                self._warmed.difference_update(pending)
            future.set_result(None)

        threading.Thread(target=warm, name="deepsearcher-warm-up", daemon=True).start()

    async def asearch(
        self, query: str, collections: Iterable[str], top_k: int = 10, **store_kwargs: str
    ) -> list[RetrievalResult]:
        """`search` off the event loop, so many searches of one agent step overlap (after a
        warm-up in progress, so they do not all pay the first search's costs at once)."""
        if self._warming is not None and not self._warming.done():
            await asyncio.wrap_future(self._warming)
        return await asyncio.to_thread(self.search, query, list(collections), top_k, **store_kwargs)
