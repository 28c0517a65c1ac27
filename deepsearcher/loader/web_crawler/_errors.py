"""Errors of the web crawlers (MissingAPIKeyError is the project-wide one, re-exported here)."""

from __future__ import annotations

from deepsearcher.types.errors import BadInputError, MissingAPIKeyError

__all__ = ["MissingAPIKeyError", "URLRefusedError"]


class URLRefusedError(BadInputError):
    """A URL was refused before any request to it: wrong scheme, or a forbidden network address."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
