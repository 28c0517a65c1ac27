"""Brave Search API (https://api-dashboard.search.brave.com): independent index, key in BRAVE_API_KEY."""

from __future__ import annotations

from typing import Any

from typing_extensions import Unpack

from deepsearcher.config.registry import register_provider
from deepsearcher.types.json import JSONValue
from deepsearcher.web_search.base import BaseWebSearch, WebResult, WebSearchOptions


@register_provider("web_search", "Brave", env_var="BRAVE_API_KEY")
class Brave(BaseWebSearch):
    env_var = "BRAVE_API_KEY"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str = "https://api.search.brave.com/res/v1",
        **kwargs: Unpack[WebSearchOptions],
    ) -> None:
        super().__init__(**kwargs)
        self.api_key = self._setting(api_key)
        self.base_url = base_url.rstrip("/")

    async def _request(self, query: str, max_results: int) -> JSONValue:
        headers = {"X-Subscription-Token": self.api_key, "Accept": "application/json"}
        return await self._get_json(f"{self.base_url}/web/search", {"q": query, "count": max_results}, headers)

    def _normalise(self, payload: Any) -> list[WebResult]:
        hits = (payload.get("web") or {}).get("results") or []
        return [
            self._result(hit.get("title"), hit["url"], hit.get("description"), hit.get("page_age") or hit.get("age"))
            for hit in hits
        ]
