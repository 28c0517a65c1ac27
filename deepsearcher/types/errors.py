"""Errors that carry a message a user can act on: what failed and what to do."""

from __future__ import annotations


class DeepSearcherError(Exception):
    """Base of every error DeepSearcher raises on purpose."""


class ConfigurationError(DeepSearcherError, ValueError):
    """A config key or value is wrong; the message names the key and allowed values."""


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
