"""Shared by the hosted-service adapters (FireCrawl, Jina Reader): keys, errors, fan-out,
and their base class `HostedCrawler`."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime, timezone
from typing import Any, ClassVar

import httpx

from deepsearcher import __version__
from deepsearcher.config.api_keys import resolve_api_key as _resolve
from deepsearcher.loader.web_crawler.base import BaseCrawler, CrawlSink
from deepsearcher.types import ConfigurationError
from deepsearcher.types.json import JSONObject

# Keyword arguments any crawler accepts per call (the pipeline and CLI pass them generically).
CRAWL_KWARGS = frozenset(
    {
        "max_depth",
        "max_pages",
        "limit",
        "include_patterns",
        "exclude_patterns",
        "same_site",
    }
)


def resolve_api_key(provider: str, explicit: str | None, env_vars: Iterable[str]) -> str:
    """`explicit`, else the first set environment variable; MissingAPIKeyError naming the first one."""
    names = list(env_vars)
    message = (
        f"{provider} needs an API key: set the environment variable {names[0]} "
        f"(or api_key under provide_settings.web_crawler.config)."
    )
    return str(_resolve(provider, explicit, names, section="web_crawler", message=message))


def check_crawl_kwargs(provider: str, kwargs: dict[str, Any], extra: Iterable[str] = ()) -> dict[str, Any]:
    allowed = CRAWL_KWARGS | set(extra)
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ConfigurationError(
            f"Unknown {provider} crawl option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}."
        )
    if "limit" in kwargs and "max_pages" not in kwargs:
        kwargs = {**kwargs, "max_pages": kwargs["limit"]}
    return kwargs


def api_error(service: str, response: httpx.Response) -> str:
    """'FireCrawl: HTTP 402 Payment Required: <the service's message>'."""
    message = ""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        for key in ("error", "readableMessage", "message", "detail"):
            value = payload.get(key)
            if isinstance(value, str) and value.strip():
                message = value.strip()
                break
    if not message:
        message = " ".join(response.text.split())[:200]
    head = f"{service}: HTTP {response.status_code} {response.reason_phrase}".strip()
    return f"{head}: {message}" if message else head


def describe_transport_error(service: str, exc: Exception, timeout: float) -> str:
    if isinstance(exc, (httpx.TimeoutException, asyncio.TimeoutError)):
        return f"{service}: timed out after {timeout:g} s"
    if isinstance(exc, httpx.ConnectError):
        return f"{service}: cannot connect ({exc or type(exc).__name__})"
    return f"{service}: {type(exc).__name__}: {exc}"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


async def for_each(items: list[str], limit: int, work: Callable[[str], Awaitable[None]]) -> None:
    """Run `work(item)` for every item, at most `limit` at a time."""
    semaphore = asyncio.Semaphore(max(1, limit))

    async def one(item: str) -> None:
        async with semaphore:
            await work(item)

    await asyncio.gather(*(one(item) for item in items))


class ServiceError(Exception):
    """One URL failed at the service; the message is the failure reason recorded for it."""


class HostedCrawler(BaseCrawler):
    """Base of the adapters for services that fetch the pages for us.

    It resolves the API key (config `api_key`, else the `api_key_env` variables), opens one
    HTTP client with the service's headers, and runs `_fetch` for `max_connections` URLs
    at a time; a ServiceError or a transport error becomes that URL's failure.
    """

    #: The service's name in failure reasons ("FireCrawl: HTTP 402 ...").
    service: ClassVar[str] = ""
    #: Environment variables tried for the key, in order (the first is named when none is set).
    api_key_env: ClassVar[tuple[str, ...]] = ()
    #: Per-call options this service accepts besides CRAWL_KWARGS.
    extra_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, api_key: str | None, timeout: float, max_connections: int) -> None:
        super().__init__()
        self.api_key = resolve_api_key(type(self).__name__, api_key, self.api_key_env)
        self.timeout = float(timeout)
        self.max_connections = int(max_connections)

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.api_key}",
            "User-Agent": f"DeepSearcher/{__version__}",
            "Accept": "application/json",
        }

    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The per-call options, checked (ConfigurationError for unknown ones)."""
        return check_crawl_kwargs(type(self).__name__, kwargs, extra=self.extra_options)

    @abstractmethod
    async def _fetch(
        self,
        client: httpx.AsyncClient,
        url: str,
        options: JSONObject,
        sink: CrawlSink,
    ) -> None:
        """Get `url`'s documents from the service into `sink` (raise ServiceError when it fails)."""

    async def _run(self, urls: list[str], sink: CrawlSink, **kwargs: object) -> None:
        options = self._options(kwargs)
        async with httpx.AsyncClient(headers=self._headers(), timeout=self.timeout, trust_env=True) as client:

            async def one(url: str) -> None:
                try:
                    await self._fetch(client, url, options, sink)
                except ServiceError as error:
                    await sink.failure(url, str(error))
                except (httpx.HTTPError, asyncio.TimeoutError) as exc:
                    await sink.failure(url, describe_transport_error(self.service, exc, self.timeout))

            await for_each(urls, self.max_connections, one)
