"""Which server-side paths and URLs a client may ask the server to load.

The path rules are those of `deepsearcher.app.path_rules` (the load service's, shared with MCP);
here a refused path answers 403, or 400 when the path is empty or relative. URLs must be
http or https (the crawler applies its own private-address rule on top).
"""

from __future__ import annotations

from pathlib import Path

from deepsearcher.app import loading, path_rules
from deepsearcher.app.path_rules import PathRefusedError, iter_allowed_file_sources
from deepsearcher.server.errors import APIError
from deepsearcher.types.errors import BadInputError

__all__ = [
    "NO_ROOTS",
    "check_url",
    "is_url_like",
    "iter_allowed_file_sources",
    "resolve_allowed",
]

NO_ROOTS = (
    "Loading server-side paths is disabled: list the folders clients may load from in "
    "server.allowed_roots in the config file (or upload the files to /v1/documents)."
)


def is_url_like(text: str) -> bool:
    return "://" in text


def check_url(url: str) -> str:
    """`url` when it is an http(s) URL with a host, else 400 (the load service's rule)."""
    try:
        return loading.check_url(url)
    except BadInputError as exc:
        raise APIError(400, str(exc)) from exc


def resolve_allowed(given: str, roots: list[Path]) -> Path:
    """The resolved path of `given` when it lies under an allowed root, else 403 (400 for an
    empty or relative path) naming why."""
    try:
        return path_rules.resolve_allowed(given, roots, NO_ROOTS)
    except PathRefusedError as exc:
        raise APIError(403 if exc.forbidden else 400, exc.message) from exc
