"""The web as one more source of an agent's research, beside the private collections.

For a question asked with `web` on, the agent calls `WebSource.gather` once, after it chose its
private collections: a web search API is asked a query, the result pages are fetched by the
built-in crawler (robots.txt, the SSRF guard, per-page size and time budgets, main text by
trafilatura) into the web cache, and the cache collection joins the collections the agent searches.
From there on web chunks are ranked by the same Retriever, judged by the same judge and cited like
private ones (their reference is the URL; title and fetch time travel in their metadata).

Privacy: the query sent to the search API is the user's question (or, only with
`web.query_from_private: true`, a query the LLM writes from the question and the best private
passages); private chunk text never reaches a search API or a crawler (the crawler only gets the
URLs the search API returned). Every outgoing query is a `web_search` step (so in `--json`) and,
with `web.audit_log`, a line of that file.

Faults degrade: a search API that is unset, down, throttled past its retries, slow or answering
garbage, and pages that cannot be fetched or parsed, leave the research private-only; the step says
why and the answer ends with a line saying the web part was unavailable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deepsearcher.agent.context import RunContext
from deepsearcher.agent.options import describe_validation_error
from deepsearcher.agent.web_cache import WebCache
from deepsearcher.llm.base import BaseLLM
from deepsearcher.loader.web_crawler.base import BaseCrawler
from deepsearcher.transport.retry import timeout_after
from deepsearcher.types.errors import ConfigurationError, DeepSearcherError
from deepsearcher.web_search.base import BaseWebSearch, WebSearchError

logger = logging.getLogger("deepsearcher.agent")

#: How the collection router describes the web beside the private collections (web: auto).
WEB_DESCRIPTION = (
    "the public web (a search engine, then the pages it finds): for public, recent or general facts "
    "that the private collections above do not hold"
)
#: The note ending an answer whose web part failed (the step event says why).
WEB_UNAVAILABLE = "Web search failed ({reason}); this answer uses your private documents only."

WEB_QUERY = """Write one web search query (at most 12 words) for the question below.
You may use the passages from the user's private documents to make it precise.
Reply with the query alone.

Question: {question}

Passages:
{passages}"""


class WebSettings(BaseModel):
    """The `web:` section of config.yaml: how a question reaches the web (defaults are the safe ones)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query_from_private: bool = Field(
        False, description="Let the LLM write the web query from private passages too (they then leave the machine)."
    )
    max_results: int = Field(5, ge=1, le=50, description="Search results asked per question.")
    max_pages: int = Field(3, ge=1, le=10, description="Result pages fetched per question (cached ones are free).")
    cache_ttl_hours: float = Field(24.0, gt=0, description="Hours a fetched page is reused before it is fetched again.")
    fetch_timeout: float = Field(10.0, gt=0, le=120, description="Seconds per page request.")
    max_page_bytes: int = Field(2 * 1024 * 1024, ge=1024, description="Bytes read of one page at most.")
    timeout: float = Field(30.0, gt=0, le=600, description="Seconds the whole web step may take.")
    allow_private_network: bool = Field(
        False, description="Fetch pages on private/loopback addresses (tests and intranets; off by default)."
    )
    audit_log: str | None = Field(None, description="A file each outgoing query is appended to (JSON lines).")


def check_web_settings(values: Mapping[str, Any]) -> WebSettings:
    """The `web:` section checked, or ConfigurationError naming each wrong key or value."""
    try:
        return WebSettings.model_validate(dict(values))
    except ValidationError as exc:
        raise ConfigurationError(describe_validation_error(exc, "web", sorted(WebSettings.model_fields))) from None


class WebSource:
    """Search → fetch → cache for one question; the cache collection is then searched like any other."""

    def __init__(
        self,
        search: BaseWebSearch | None,
        cache: WebCache,
        crawler: BaseCrawler,
        settings: WebSettings | None = None,
        search_error: DeepSearcherError | None = None,
    ) -> None:
        """`search` None: the configured provider could not be built (`search_error` says why); every
        question asked with web on then answers private-only, saying so."""
        self.search = search
        self.cache = cache
        self.crawler = crawler
        self.settings = settings or WebSettings.model_validate({})
        self.search_error = search_error

    @property
    def collection(self) -> str:
        return self.cache.collection

    async def gather(self, question: str, ctx: RunContext, llm: BaseLLM, private: Sequence[str] = ()) -> bool:
        """Search and fetch for `question`; True when the web cache holds pages to search. On any
        fault: a `web_search` step with the error, `ctx.extra["web_unavailable"]` set, False."""
        budget = self.settings.timeout
        left = ctx.time_left()
        if left is not None:
            budget = min(budget, max(0.1, left / 2))  # the private research and the answer keep the rest
        try:
            async with timeout_after(budget):
                return await self._gather(question, ctx, llm, private)
        except (asyncio.TimeoutError, TimeoutError):
            return self._unavailable(ctx, f"the web step took longer than {budget:g} s")
        except DeepSearcherError as exc:
            return self._unavailable(ctx, str(exc))

    async def _gather(self, question: str, ctx: RunContext, llm: BaseLLM, private: Sequence[str]) -> bool:
        if self.search is None:
            reason = str(self.search_error) if self.search_error else "no web search provider is configured"
            return self._unavailable(ctx, reason)
        query = await self._query(question, ctx, llm, private)
        self._audit(query)
        try:
            results = await self.search.asearch(query, self.settings.max_results)
        except WebSearchError as exc:
            ctx.emit("web_search", provider=self.search.name, query=query, results=0, error=str(exc))
            return self._unavailable(ctx, f"{exc.provider}: {exc.reason}", emitted=True)
        urls = list(dict.fromkeys(result.url for result in results))
        ctx.emit("web_search", provider=self.search.name, query=query, results=len(urls), urls=urls)
        fresh = await asyncio.to_thread(self.cache.fresh)
        to_fetch = [url for url in urls if url not in fresh][: self.settings.max_pages]
        fetched, failed = await self._fetch(to_fetch)
        reused = [url for url in urls if url in fresh]
        ctx.emit("web_fetch", fetched=len(fetched), reused=len(reused), failed=failed)
        if not fetched and not reused:
            return self._unavailable(ctx, "no result page could be fetched" if urls else "the search found nothing")
        return True

    async def _query(self, question: str, ctx: RunContext, llm: BaseLLM, private: Sequence[str]) -> str:
        """The question itself; with `query_from_private` (opt-in) and private passages, the LLM's query."""
        if not (self.settings.query_from_private and private):
            return " ".join(question.split())
        passages = "\n".join(f"- {text[:400]}" for text in private[:3])
        written = await ctx.chat(
            llm, [{"role": "user", "content": WEB_QUERY.format(question=question, passages=passages)}], "web_query"
        )
        lines = [line.strip().strip('"') for line in written.splitlines() if line.strip()]
        return lines[0][:200] if lines else " ".join(question.split())

    async def _fetch(self, urls: list[str]) -> tuple[list[str], dict[str, str]]:
        """(the URLs fetched into the cache, URL → why each other failed)."""
        if not urls:
            return [], {}
        report = await self.crawler.acrawl(urls)
        failed = {failure.url: failure.reason for failure in report.failures}
        failed.update({skip.url: skip.reason for skip in report.skipped})
        documents = [document for document in report.documents if document.page_content.strip()]
        if documents:
            await asyncio.to_thread(self.cache.add, documents)
        return list(dict.fromkeys(document.reference for document in documents)), failed

    def _audit(self, query: str) -> None:
        if not self.settings.audit_log:
            return
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "provider": self.search_name,
            "query": query,
        }
        path = Path(self.settings.audit_log).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")

    @property
    def search_name(self) -> str:
        return self.search.name if self.search is not None else ""

    def _unavailable(self, ctx: RunContext, reason: str, emitted: bool = False) -> bool:
        logger.warning("Web search unavailable, answering from private documents only: %s", reason)
        if not emitted:
            ctx.emit("web_search", provider=self.search_name, query=None, results=0, error=reason)
        ctx.extra["web_unavailable"] = reason
        return False


def web_note(ctx: RunContext) -> str | None:
    """The line an answer ends with when its web part failed; None when it did not."""
    reason = ctx.extra.get("web_unavailable")
    return WEB_UNAVAILABLE.format(reason=str(reason).rstrip(".")) if reason else None
