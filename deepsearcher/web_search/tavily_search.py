"""Tavily (https://tavily.com), a search API built for LLM agents, through its official SDK
(`tavily-python`); key in TAVILY_API_KEY."""

from __future__ import annotations

from typing import Any

import httpx
from typing_extensions import Unpack

from deepsearcher.config.optional import require
from deepsearcher.config.registry import register_provider
from deepsearcher.transport.http import HTTPStatusError, classify_http
from deepsearcher.transport.retry import Failure
from deepsearcher.types.json import JSONValue
from deepsearcher.web_search.base import BaseWebSearch, WebResult, WebSearchOptions


@register_provider("web_search", "Tavily", extra="web", requires=("tavily",), env_var="TAVILY_API_KEY")
class Tavily(BaseWebSearch):
    env_var = "TAVILY_API_KEY"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        search_depth: str = "basic",
        **kwargs: Unpack[WebSearchOptions],
    ) -> None:
        super().__init__(**kwargs)
        self.api_key = self._setting(api_key)
        self.base_url = base_url  # None: the SDK's https://api.tavily.com
        self.search_depth = search_depth
        self._sdk = require("tavily", "web", "the Tavily web search provider")

    async def _request(self, query: str, max_results: int) -> JSONValue:
        """The SDK turns a 429 into UsageLimitExceededError without the response: our own client's hook
        keeps the last response's headers, so the retry loop still waits as long as Retry-After says."""
        last: dict[str, httpx.Headers] = {}

        async def keep(response: httpx.Response) -> None:
            last["headers"] = response.headers

        async with httpx.AsyncClient(
            timeout=self.policy.timeout,
            base_url=self.base_url or "https://api.tavily.com",
            headers={"Authorization": f"Bearer {self.api_key}"},
            event_hooks={"response": [keep]},
        ) as client:
            sdk = self._sdk.AsyncTavilyClient(api_key=self.api_key, api_base_url=self.base_url, client=client)
            try:
                return await sdk.search(query, max_results=max_results, search_depth=self.search_depth)
            except self._sdk.UsageLimitExceededError as exc:
                raise HTTPStatusError(429, str(exc) or "rate limited", last.get("headers") or {}) from None

    def _classify(self, exc: BaseException) -> Failure:
        """429 and 5xx are retried (Retry-After honoured); the SDK's own errors (a bad key, an exhausted
        plan) are not worth a retry."""
        if isinstance(exc, httpx.HTTPStatusError):
            return Failure.from_status(exc.response.status_code, exc.response.text[:200], exc.response.headers)
        if type(exc).__module__.startswith("tavily"):
            return Failure("fatal", f"{type(exc).__name__}: {exc}", False, hint="Check TAVILY_API_KEY and your plan")
        return classify_http(exc)

    def _normalise(self, payload: Any) -> list[WebResult]:
        return [
            self._result(hit.get("title"), hit["url"], hit.get("content"), hit.get("published_date"))
            for hit in payload["results"]
        ]
