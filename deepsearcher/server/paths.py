"""Which server-side paths and URLs a client may ask the server to load.

The path rules are those of `deepsearcher.server.path_rules` (shared with the MCP server);
here a refused path answers 403, or 400 when the path is empty or relative. URLs must be
http or https (the crawler applies its own private-address rule on top).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from deepsearcher.server import path_rules
from deepsearcher.server.errors import APIError
from deepsearcher.server.path_rules import PathRefusedError, iter_allowed_file_sources

__all__ = ["NO_ROOTS", "check_url", "is_url_like", "iter_allowed_file_sources", "resolve_allowed"]

NO_ROOTS = "Loading server-side paths is disabled: list the folders clients may load from in server.allowed_roots in the config file (or upload the files to /v1/documents)."


def is_url_like(text: str) -> bool:
    return "://" in text


def check_url(url: str) -> str:
    """`url` when it is an http(s) URL with a host, else 400."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise APIError(400, f"Only http and https URLs can be loaded, got '{url}'.")
    if not parts.hostname:
        raise APIError(400, f"The URL '{url}' has no host name.")
    return url.strip()


def resolve_allowed(given: str, roots: list[Path]) -> Path:
    """The resolved path of `given` when it lies under an allowed root, else 403 (400 for an
    empty or relative path) naming why."""
    try:
        return path_rules.resolve_allowed(given, roots, NO_ROOTS)
    except PathRefusedError as exc:
        raise APIError(403 if exc.forbidden else 400, exc.message) from exc
