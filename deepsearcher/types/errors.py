"""One hierarchy of errors whose messages a user can act on: what failed and what to do.

Each kind carries the HTTP status the REST API answers with and the exit status of the
CLI, so every front-end (server, CLI, MCP, background jobs, SSE streams) maps an error
the same way through `classify` — by its type, never by matching its text.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import ClassVar

__all__ = [
    "BadInputError",
    "CollectionNotFoundError",
    "ConfigurationError",
    "DeepSearcherError",
    "EmbeddingMismatchError",
    "ErrorInfo",
    "LoaderError",
    "MissingAPIKeyError",
    "MissingDependencyError",
    "NoSearchableDataError",
    "NotReadyError",
    "ProviderError",
    "StorageFaultError",
    "StoreInUseError",
    "VectorStoreError",
    "cause_chain",
    "classify",
    "failure_message",
    "report",
]


def cause_chain(exc: BaseException | None, limit: int = 16) -> list[BaseException]:
    """`exc` and the exceptions it was raised from, each once: SDK and gRPC errors can carry a
    `__context__` that points back up the chain, and a loop over it must still end."""
    chain: list[BaseException] = []
    while exc is not None and len(chain) < limit and all(exc is not seen for seen in chain):
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


class DeepSearcherError(Exception):
    """Base of every error DeepSearcher raises on purpose: its message is meant for the user.

    `http_status` and `exit_code` may be overridden per class, or per instance when one
    class covers two cases (a refused path is 403, a malformed one 400).
    """

    error_kind: ClassVar[str] = "error"
    http_status: int = 500
    exit_code: int = 1


class BadInputError(DeepSearcherError, ValueError):
    """A request's own values are wrong (empty question, top_k out of range, unknown agent)."""

    error_kind = "bad_input"
    http_status = 400
    exit_code = 2


class ConfigurationError(DeepSearcherError, ValueError):
    """A config key or value is wrong; the message names the key and allowed values."""

    error_kind = "configuration"
    http_status = 400


class UnknownOptionError(ConfigurationError):
    """An option name or value a schema refuses (a typo in a config file or a request): reported at
    once, never taken for a missing optional part such as "no LLM key yet"."""


class MissingAPIKeyError(ConfigurationError, RuntimeError):
    """A provider (LLM, embedding, crawler, loader) needs an API key and none was configured
    or found in the environment. The default message names the variable and the config key:
    ``No API key for OpenAI: set OPENAI_API_KEY or provide_settings.llm.config.api_key.``

    Also a RuntimeError: DeepSearcher's providers raised RuntimeError for a missing key.
    """

    error_kind = "missing_api_key"

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

    error_kind = "missing_dependency"
    http_status = 503

    def __init__(self, package: str, extra: str, feature: str = "") -> None:
        what = f" for {feature}" if feature else ""
        super().__init__(
            f"The package '{package}' is needed{what} but is not installed. "
            f"Install it with: pip install 'deepsearcher[{extra}]'"
        )
        self.package = package
        self.extra = extra


class NotReadyError(DeepSearcherError):
    """A component a request needs is not available yet (server starting, no LLM configured)."""

    error_kind = "not_ready"
    http_status = 503


class LoaderError(DeepSearcherError):
    """A source could not be loaded; names the source and the reason."""

    error_kind = "load_failed"
    http_status = 400

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class ProviderError(DeepSearcherError):
    """A remote or local model provider (LLM, embedding) failed or answered something unusable."""

    error_kind = "provider"
    http_status = 502


class VectorStoreError(DeepSearcherError):
    """The vector store refused or failed an operation."""

    error_kind = "vector_store"


class CollectionNotFoundError(VectorStoreError):
    """A named collection is not in the store; the message lists those that are."""

    error_kind = "collection_not_found"
    http_status = 404


class NoSearchableDataError(DeepSearcherError):
    """A question was asked with nothing to search: no collection, or all empty or unauthorized."""

    error_kind = "no_searchable_data"
    http_status = 409


class StoreInUseError(VectorStoreError):
    """An embedded store file is open in another process."""

    error_kind = "store_in_use"
    http_status = 503


class StorageFaultError(VectorStoreError):
    """The store's disk refused a write: no space left, a read-only file system, a lost lock.
    Nothing DeepSearcher can fix; the message says what to do, and a rerun resumes the load."""

    error_kind = "storage_fault"
    http_status = 507


class EmbeddingMismatchError(VectorStoreError):
    """A collection was built with another embedding model or dimension."""

    error_kind = "embedding_mismatch"
    http_status = 409


def failure_message(what: str, model: str, where: str | None, reason: str, hint: str = "") -> str:
    """'<what> failed (model <model> at <where>): <reason>. <hint>' — one line for LLM and embedding errors."""
    at = f" at {where}" if where else ""
    message = f"{what} failed (model {model}{at}): {reason}"
    return f"{message}. {hint}" if hint else message


@dataclass(frozen=True)
class ErrorInfo:
    """How every front-end reports one exception.

    `known`: the message is written for users and may be shown as is; otherwise the
    front-end logs the traceback and shows a generic message.
    """

    kind: str
    http_status: int
    exit_code: int
    message: str
    known: bool
    error_id: str | None = None


#: Exceptions from outside DeepSearcher whose messages are still fit for users.
_FOREIGN: tuple[tuple[type[BaseException], str, int], ...] = (
    (ImportError, "missing_dependency", 503),
    (OSError, "os_error", 500),
)


def classify(exc: BaseException) -> ErrorInfo:
    """The one mapping from an exception to its kind, HTTP status, exit status and message."""
    if isinstance(exc, DeepSearcherError):
        return ErrorInfo(exc.error_kind, exc.http_status, exc.exit_code, str(exc), True)
    for cls, kind, status in _FOREIGN:
        if isinstance(exc, cls):
            return ErrorInfo(kind, status, 1, str(exc) or type(exc).__name__, True)
    return ErrorInfo("internal", 500, 1, f"{type(exc).__name__}: {exc}", False)


def report(exc: BaseException, logger: logging.Logger, where: str) -> ErrorInfo:
    """`classify(exc)`; an unexpected exception is logged with its traceback under a fresh
    error id and its message replaced by one naming that id (no internals leak to clients)."""
    info = classify(exc)
    if info.known:
        return info
    error_id = uuid.uuid4().hex[:12]
    logger.error(
        "Unexpected error %s in %s",
        error_id,
        where,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    message = f"Internal error (error id {error_id}): {type(exc).__name__}; the details are in the log."
    return replace(info, message=message, error_id=error_id)
