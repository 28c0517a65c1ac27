"""Serper (https://serper.dev): Google results as JSON, key in SERPER_API_KEY."""

from __future__ import annotations

from typing import Any

from typing_extensions import Unpack

from deepsearcher.config.registry import register_provider
from deepsearcher.types.json import JSONValue
from deepsearcher.web_search.base import BaseWebSearch, WebResult, WebSearchOptions


@register_provider("web_search", "Serper", env_var="SERPER_API_KEY")
class Serper(BaseWebSearch):
    env_var = "SERPER_API_KEY"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str = "https://google.serper.dev",
        **kwargs: Unpack[WebSearchOptions],
    ) -> None:
        super().__init__(**kwargs)
        self.api_key = self._setting(api_key)
        self.base_url = base_url.rstrip("/")

    async def _request(self, query: str, max_results: int) -> JSONValue:
        headers = {"X-API-KEY": self.api_key}
        return await self._post_json(f"{self.base_url}/search", {"q": query, "num": max_results}, headers)

    def _normalise(self, payload: Any) -> list[WebResult]:
        return [
            self._result(hit.get("title"), hit["link"], hit.get("snippet"), hit.get("date"))
            for hit in payload.get("organic") or []
        ]
