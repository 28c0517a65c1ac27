"""DuckDuckGo through `ddgs` (no key): for a laptop without any search account. Unofficial and
rate-limited by DuckDuckGo; SearXNG or a keyed API is steadier."""

from __future__ import annotations

import asyncio
from typing import Any

from typing_extensions import Unpack

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.transport.retry import Failure
from deepsearcher.types.json import JSONObject, JSONValue
from deepsearcher.web_search.base import BaseWebSearch, WebResult, WebSearchOptions


@register_provider("web_search", "DuckDuckGo", extra="web", requires=("ddgs",))
class DuckDuckGo(BaseWebSearch):
    def __init__(self, region: str = "wt-wt", backend: str = "auto", **kwargs: Unpack[WebSearchOptions]) -> None:
        super().__init__(**kwargs)
        self.region = region
        self.backend = backend
        self._ddgs = require("ddgs", "web", "the DuckDuckGo web search provider")

    async def _request(self, query: str, max_results: int) -> JSONValue:
        def search() -> list[JSONObject]:
            client = self._ddgs.DDGS(timeout=int(self.policy.timeout))
            return list(client.text(query, region=self.region, backend=self.backend, max_results=max_results))

        return await asyncio.to_thread(search)

    def _classify(self, exc: BaseException) -> Failure:
        """ddgs says "Ratelimit" in its exception's name or text when DuckDuckGo throttles it."""
        throttled = "ratelimit" in f"{type(exc).__name__} {exc}".lower()
        return Failure("status" if throttled else "fatal", f"{type(exc).__name__}: {exc}", throttled)

    def _normalise(self, payload: Any) -> list[WebResult]:
        return [self._result(hit.get("title"), hit["href"], hit.get("body"), hit.get("date")) for hit in payload]
