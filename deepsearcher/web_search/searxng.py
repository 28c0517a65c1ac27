"""SearXNG: a self-hosted metasearch engine with a JSON API and no key (https://docs.searxng.org)."""

from __future__ import annotations

from typing import Any

from typing_extensions import Unpack

from deepsearcher.config.registry import register_provider
from deepsearcher.types.json import JSONValue
from deepsearcher.web_search.base import BaseWebSearch, WebResult, WebSearchOptions


@register_provider("web_search", "SearXNG", env_var="SEARXNG_URL")
class SearXNG(BaseWebSearch):
    """`GET {base_url}/search?q=...&format=json` (the instance must list `json` in `search.formats`)."""

    env_var = "SEARXNG_URL"

    def __init__(
        self,
        base_url: str | None = None,
        categories: str = "general",
        language: str = "auto",
        **kwargs: Unpack[WebSearchOptions],
    ):
        super().__init__(**kwargs)
        self.base_url = self._setting(base_url, "base_url").rstrip("/")
        self.categories = categories
        self.language = language

    async def _request(self, query: str, max_results: int) -> JSONValue:
        params = {"q": query, "format": "json", "categories": self.categories, "language": self.language}
        return await self._get_json(f"{self.base_url}/search", params)

    def _normalise(self, payload: Any) -> list[WebResult]:
        return [
            self._result(hit.get("title"), hit["url"], hit.get("content"), hit.get("publishedDate"))
            for hit in payload["results"]
        ]
