"""Shared by the hosted-service adapters (FireCrawl, Jina Reader): keys, errors, fan-out."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Iterable

import httpx

from deepsearcher.config.api_keys import resolve_api_key as _resolve
from deepsearcher.types import ConfigurationError

# Keyword arguments any crawler accepts per call (the pipeline and CLI pass them generically).
CRAWL_KWARGS = frozenset({"max_depth", "max_pages", "limit", "include_patterns", "exclude_patterns", "same_site"})


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
        raise ConfigurationError(f"Unknown {provider} crawl option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}.")
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
