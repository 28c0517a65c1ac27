"""The web cache use cases: list the fetched pages (with their fetch time and the hours left) and
clear them. The same for `deepsearcher web-cache`, REST and MCP; the cache itself is
deepsearcher/agent/web_cache.py."""

from __future__ import annotations

from deepsearcher.agent.web_cache import CachedPage
from deepsearcher.app.components import Components
from deepsearcher.app.locks import collection_lock


def list_web_cache(components: Components) -> list[CachedPage]:
    """Every cached page, sorted by URL (expired ones show negative hours until the next question removes them)."""
    return components.web_cache.pages()


def clear_web_cache(components: Components) -> int:
    """Drop every cached page; how many there were."""
    cache = components.web_cache
    with collection_lock(cache.collection):
        return cache.clear()
