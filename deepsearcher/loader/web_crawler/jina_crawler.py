"""Jina Reader (https://jina.ai/reader): GET {base_url}/{url} returns the page as Markdown.

Needs JINA_API_KEY (JINA_API_TOKEN and JINAAI_API_KEY, the names the original DeepSearcher
read, work too), sent as a Bearer token. Jina's servers fetch the pages, so only the URL
scheme is checked here. Reads single pages: `max_depth` is not supported by the service.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import httpx

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.web_crawler._hosted import (
    HostedCrawler,
    ServiceError,
    api_error,
    now_iso,
)
from deepsearcher.loader.web_crawler.base import CrawlSink
from deepsearcher.types import ConfigurationError, Document
from deepsearcher.types.json import JSONObject

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://r.jina.ai"
SERVICE = "Jina Reader"
_TARGET_ERROR = re.compile(r"returned error (\d{3})", re.IGNORECASE)


@register_provider("web_crawler", env_var="JINA_API_KEY")
class JinaCrawler(HostedCrawler):
    """Pages as Markdown from Jina Reader. `response_format`: "json" (default) or "text"."""

    service = SERVICE
    api_key_env = ("JINA_API_KEY", "JINA_API_TOKEN", "JINAAI_API_KEY")

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        response_format: str = "json",
        timeout: float = 60.0,
        max_connections: int = 4,
        headers: dict[str, str] | None = None,
    ) -> None:
        if response_format not in ("json", "text"):
            raise ConfigurationError(
                f"JinaCrawler response_format must be 'json' or 'text', got {response_format!r} "
                "(provide_settings.web_crawler.config.response_format)."
            )
        super().__init__(api_key, timeout, max_connections)
        self.base_url = base_url.rstrip("/")
        self.response_format = response_format
        self.headers = dict(headers or {})

    def _headers(self) -> dict[str, str]:
        accept = "application/json" if self.response_format == "json" else "text/plain"
        return {**super()._headers(), "Accept": accept, **self.headers}

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        options = super()._options(kwargs)
        if int(options.get("max_depth") or 0) > 0:
            logger.warning(
                "JinaCrawler reads single pages: max_depth=%s is ignored",
                options["max_depth"],
            )
        return options

    async def _fetch(
        self,
        client: httpx.AsyncClient,
        url: str,
        options: JSONObject,
        sink: CrawlSink,
    ) -> None:
        sink.stats.requests += 1
        response = await client.get(f"{self.base_url}/{url}")
        if response.status_code >= 400:
            raise ServiceError(api_error(SERVICE, response))
        problem, document = self._document(response, url)
        if problem:
            raise ServiceError(problem)
        sink.stats.pages_fetched += 1
        sink.stats.bytes_received += len(response.content)
        assert document is not None  # _document gives a problem or a document
        await sink.document(document)

    def _document(self, response: httpx.Response, url: str) -> tuple[str | None, Document | None]:
        content_type = response.headers.get("content-type", "")
        warning = ""
        if "json" in content_type:
            try:
                payload = response.json()
            except ValueError:
                return f"{SERVICE}: response is not valid JSON", None
            data = payload.get("data") if isinstance(payload, dict) else None
            if not isinstance(data, dict):
                return f"{SERVICE}: response without data", None
            text = str(data.get("content") or "").strip()
            title = data.get("title")
            final = data.get("url") or url
            warning = str(data.get("warning") or "")
            description = data.get("description")
        else:
            title, final, text, warning = _parse_text(response.text, url)
            description = None
        target_error = _TARGET_ERROR.search(warning)
        if target_error:
            return (
                f"HTTP {target_error.group(1)} (via {SERVICE}: {warning.strip()})",
                None,
            )
        if not text:
            return f"{SERVICE}: no text returned" + (f" ({warning.strip()})" if warning else ""), None
        metadata: JSONObject = {
            "reference": final,
            "title": title or final,
            "fetched_at": now_iso(),
            "content_type": "text/markdown",
            "status_code": 200,
            "depth": 0,
            "crawler": "JinaCrawler",
        }
        if final != url:
            metadata["redirected_from"] = [url]
        if isinstance(description, str) and description:
            metadata["description"] = description
        return None, Document(page_content=text, metadata=metadata)


def _parse_text(body: str, url: str) -> tuple[str | None, str, str, str]:
    """Jina's text format: 'Title: …', 'URL Source: …', 'Warning: …', then 'Markdown Content:'."""
    title: str | None = None
    final = url
    warning = ""
    head, marker, content = body.partition("Markdown Content:")
    if not marker:
        return None, url, body.strip(), ""
    for line in head.splitlines():
        name, _, value = line.partition(":")
        value = value.strip()
        if name.strip() == "Title":
            title = value or None
        elif name.strip() == "URL Source" and value:
            final = value
        elif name.strip() == "Warning":
            warning = value
    return title, final, content.strip(), warning
