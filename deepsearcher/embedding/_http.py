"""What every remote embedding provider shares: keys, batching, the HTTP client and retries.

A provider file only says how its API looks (URL, JSON body, where the vectors are in
the reply, its batch limits and known dimensions); this module does the rest.

Retries use the shared transport (`deepsearcher.transport`), the same policy as LLM calls:
429 and 5xx answers, timeouts and dropped connections are retried with exponential
backoff, honouring a server's Retry-After. Embedding calls are synchronous (the ingestion
pipeline runs them in a plain thread), so each blocking attempt goes through
`transport.http.call_sync`. Deadlines: `timeout` per attempt (connect to the last byte),
`call_timeout` for the whole call with its retries.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import ClassVar, TypeVar

import httpx

from deepsearcher.config.api_keys import resolve_api_key
from deepsearcher.embedding.base import UNDECLARED_CHUNK_SIZE, BaseEmbedding
from deepsearcher.transport.http import BadResponse, HTTPStatusError, call_sync, classify_http, error_detail
from deepsearcher.transport.retry import DEFAULT_CALL_TIMEOUT, DEFAULT_TIMEOUT, Failure, GiveUp, RetryPolicy
from deepsearcher.types.errors import ConfigurationError, ProviderError, failure_message

logger = logging.getLogger(__name__)
T = TypeVar("T")

QUERY = "query"
DOCUMENT = "document"

#: Text sent in place of an empty string (most APIs reject "").
EMPTY_TEXT = " "
_PROBE_TEXT = "dimension probe"


class EmbeddingError(ProviderError):
    """An embedding request failed for good; one line naming provider, model, server and cause."""

    error_kind = "embedding"

    def __init__(
        self,
        provider: str,
        model: str,
        where: str | None,
        reason: str,
        *,
        status: int | None = None,
        hint: str = "",
    ) -> None:
        super().__init__(failure_message(provider, model, where, reason, hint))
        self.provider = provider
        self.model = model
        self.status = status
        self.reason = reason


def batched(texts: list[str], max_items: int, max_chars: int | None = None) -> Iterator[list[str]]:
    """Consecutive slices of `texts` with at most `max_items` items and (roughly) `max_chars` characters.

    Character counts stand in for the per-request token limits some APIs have; a single
    text longer than `max_chars` still goes alone (the API truncates or rejects it).
    """
    batch: list[str] = []
    size = 0
    for text in texts:
        if batch and (len(batch) >= max_items or (max_chars is not None and size + len(text) > max_chars)):
            yield batch
            batch, size = [], 0
        batch.append(text)
        size += len(text)
    if batch:
        yield batch


def openai_vectors(data: object, count: int) -> list[list[float]]:
    """Vectors of an OpenAI-shaped reply `{"data": [{"embedding": [...], "index": i}, ...]}`, in input order."""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        got = len(items) if isinstance(items, list) else "no"
        raise BadResponse(f"expected {count} embeddings in 'data', got {got}")
    ordered = sorted(items, key=lambda item: item.get("index", 0)) if all(isinstance(i, dict) for i in items) else items
    return [vector_of(item.get("embedding") if isinstance(item, dict) else None) for item in ordered]


def vector_of(value: object) -> list[float]:
    if not isinstance(value, list) or not value:
        raise BadResponse("an embedding is missing or empty")
    return [float(x) for x in value]


class RemoteEmbedding(BaseEmbedding):
    """Base of the API-backed providers: batching, retries, key, dimension, query/document split.

    Subclasses set the class attributes below and implement `_request` (URL and JSON
    body for one batch) and `_vectors` (the vectors in the reply). Providers that do not
    speak HTTP+JSON override `_embed_batch` instead.

    Common config: model, api_key (else the provider's environment variable), base_url,
    dimension (output size where the model supports choosing it), batch_size (capped at
    the provider's limit), timeout, max_retries, retry_base_delay, retry_max_delay,
    max_retry_after, max_concurrency (embedding batches the ingestion pipeline keeps in
    flight, see `offline_loading.embed_scheduler`), query_prefix / document_prefix (text put before each query /
    passage, for models trained with instructions such as E5's "query: " / "passage: "),
    headers (extra HTTP headers).
    """

    api_key_env: ClassVar[str | None] = None
    #: Other environment variables tried for the key, after `api_key_env`.
    api_key_fallback_env: ClassVar[tuple[str, ...]] = ()
    requires_api_key: ClassVar[bool] = True
    default_model: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    base_url_env: ClassVar[tuple[str, ...]] = ()
    #: Vector length of the models we know, so `dimension` needs no network call.
    known_dimensions: ClassVar[dict[str, int]] = {}
    #: Tokens each model reads from one input, where its documentation says: declared as
    #: `window_tokens`, so the default chunk size fits it (an API that truncates does so unseen).
    known_windows: ClassVar[dict[str, int]] = {}
    #: The API's limits per request: number of inputs, and a rough character budget.
    max_batch: ClassVar[int] = 2048
    max_batch_chars: ClassVar[int | None] = None

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        *,
        batch_size: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 20.0,
        max_retry_after: float = 120.0,
        call_timeout: float | None = None,
        max_concurrency: int = 4,
        query_prefix: str = "",
        document_prefix: str = "",
        headers: dict[str, str] | None = None,
        model_name: str | None = None,
        **kwargs: object,
    ) -> None:
        if model and model_name and model != model_name:
            raise ConfigurationError(
                f"{self.display_name()}: model={model!r} and model_name={model_name!r} disagree; give one of them."
            )
        self.model = model or model_name or self.default_model  # model_name: DeepSearcher's keyword
        self.model_name = self.model
        self.base_url = self._resolve_base_url(base_url)
        self.api_key = resolve_api_key(
            self.display_name(),
            api_key,
            (self.api_key_env, *self.api_key_fallback_env),
            section="embedding",
            required=self.requires_api_key,
        )
        self.requested_dimension = int(dimension) if dimension else None
        self.batch_size = max(1, min(int(batch_size or self.max_batch), self.max_batch))
        self.policy = RetryPolicy(
            max_retries=max_retries,
            timeout=timeout,
            base_delay=retry_base_delay,
            max_delay=retry_max_delay,
            max_retry_after=max_retry_after,
            # the whole call, retries included (a longer per-attempt timeout widens it)
            call_timeout=float(call_timeout) if call_timeout else max(DEFAULT_CALL_TIMEOUT, float(timeout)),
        )
        self.max_concurrency = max(1, int(max_concurrency))
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.extra_headers = dict(headers or {})
        self.options = kwargs  # provider-specific request fields, sent as given
        self._dimension: int | None = self.requested_dimension or self.known_dimensions.get(self.model)
        self.window_tokens = self.known_windows.get(self.model)
        self._dimension_lock = threading.Lock()
        self._http: httpx.Client | None = None
        self.retries = 0  # how many retries this instance made (for logs and tests)

    # ------------------------------------------------------------------ naming and config

    @classmethod
    def display_name(cls) -> str:
        return cls.__name__

    def _resolve_base_url(self, base_url: str | None) -> str:
        for name in self.base_url_env:
            base_url = base_url or os.environ.get(name) or None
        return (base_url or self.default_base_url).rstrip("/")

    # ------------------------------------------------------------------ the contract

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed([self.document_prefix + text for text in texts], DOCUMENT)

    def embed_query(self, text: str) -> list[float]:
        return self._embed([self.query_prefix + text], QUERY)[0]

    def default_chunk_size(self) -> int:
        """What fits the declared window, but no more than the size used when none is declared:
        an 8,192-token window would otherwise mean 29,000-character chunks."""
        return min(UNDECLARED_CHUNK_SIZE, super().default_chunk_size())

    @property
    def dimension(self) -> int:
        """Known from the model table or the configured `dimension`; else one probe call, cached."""
        if self._dimension is None:
            with self._dimension_lock:
                if self._dimension is None:
                    self._dimension = len(self._embed([_PROBE_TEXT], QUERY)[0])
        return self._dimension

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        texts = [text if text.strip() else EMPTY_TEXT for text in texts]
        vectors: list[list[float]] = []
        for batch in batched(texts, self.batch_size, self.max_batch_chars):
            vectors.extend(self._embed_batch(batch, kind))
        if vectors and self._dimension is None:
            self._dimension = len(vectors[0])
        return vectors

    # ------------------------------------------------------------------ one request

    def _request(self, texts: list[str], kind: str) -> tuple[str, dict[str, object]]:
        """(URL, JSON body) of the request embedding `texts` as `kind` (QUERY or DOCUMENT)."""
        raise NotImplementedError

    def _vectors(self, data: object, count: int) -> list[list[float]]:
        """The `count` vectors of a reply, in input order (raise BadResponse when absent)."""
        return openai_vectors(data, count)

    def _headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return {**headers, **self.extra_headers}

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(
                timeout=httpx.Timeout(self.policy.timeout, connect=min(10.0, self.policy.timeout))
            )
        return self._http

    def _embed_batch(self, texts: list[str], kind: str) -> list[list[float]]:
        url, body = self._request(texts, kind)
        headers = self._headers()

        def attempt() -> list[list[float]]:
            response = self._client().post(url, json=body, headers=headers)
            if response.status_code >= 400:
                raise HTTPStatusError(response.status_code, error_detail(response), response.headers)
            try:
                data = response.json()
            except ValueError as exc:
                raise BadResponse(f"not JSON: {response.text[:80]!r}") from exc
            return self._vectors(data, len(texts))

        return self._with_retries(attempt, classify_http)

    def _with_retries(self, attempt: Callable[[], T], classify: Callable[[BaseException], Failure]) -> T:
        def on_retry(failure: Failure, delay: float) -> None:
            self.retries += 1
            logger.info(
                "%s embedding: %s; retrying in %.1f s",
                self.display_name(),
                failure.reason,
                delay,
            )

        try:
            return call_sync(attempt, classify, self.policy, on_retry)
        except GiveUp as exc:
            raise EmbeddingError(
                self.display_name(),
                self.model,
                self.base_url or None,
                exc.reason,
                status=exc.failure.status,
                hint=exc.failure.hint,
            ) from exc.__cause__  # the last attempt's own exception, for debugging

    def close(self) -> None:
        client, self._http = self._http, None
        if client is not None:
            client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"
