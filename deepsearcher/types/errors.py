"""Errors that carry a message a user can act on: what failed and what to do."""

from __future__ import annotations


class DeepSearcherError(Exception):
    """Base of every error DeepSearcher raises on purpose."""


class ConfigurationError(DeepSearcherError, ValueError):
    """A config key or value is wrong; the message names the key and allowed values."""


class MissingAPIKeyError(ConfigurationError):
    """A provider (LLM, embedding, crawler, loader) needs an API key and none was configured
    or found in the environment. The default message names the variable and the config key:
    ``No API key for OpenAI: set OPENAI_API_KEY or provide_settings.llm.config.api_key.``
    """

    def __init__(
        self,
        provider: str,
        env_var: str | None,
        extra_hint: str = "",
        *,
        section: str = "llm",
        message: str | None = None,
    ) -> None:
        if message is None:
            where = f"set {env_var} or " if env_var else "set "
            message = f"No API key for {provider}: {where}provide_settings.{section}.config.api_key."
            if extra_hint:
                message += f" {extra_hint}"
        super().__init__(message)
        self.provider = provider
        self.env_var = env_var


class MissingDependencyError(DeepSearcherError, ImportError):
    """An optional package is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str, feature: str = "") -> None:
        what = f" for {feature}" if feature else ""
        super().__init__(
            f"The package '{package}' is needed{what} but is not installed. "
            f"Install it with: pip install 'deepsearcher[{extra}]'"
        )
        self.package = package
        self.extra = extra


class LoaderError(DeepSearcherError):
    """A source could not be loaded; names the source and the reason."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class VectorStoreError(DeepSearcherError):
    """The vector store refused or failed an operation."""


class StoreInUseError(VectorStoreError):
    """An embedded store file is open in another process."""


class EmbeddingMismatchError(VectorStoreError):
    """A collection was built with another embedding model or dimension."""
