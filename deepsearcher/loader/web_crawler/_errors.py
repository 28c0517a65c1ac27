"""Errors of the web crawlers (kept here until the project unifies its API-key error)."""

from __future__ import annotations

from deepsearcher.types.errors import ConfigurationError, DeepSearcherError


class MissingAPIKeyError(ConfigurationError):
    """A hosted crawler was chosen but its API key is not set; names the environment variable."""

    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(
            f"{provider} needs an API key: set the environment variable {env_var} "
            f"(or api_key under provide_settings.web_crawler.config)."
        )
        self.provider = provider
        self.env_var = env_var


class URLRefusedError(DeepSearcherError):
    """A URL was refused before any request to it: wrong scheme, or a forbidden network address."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
