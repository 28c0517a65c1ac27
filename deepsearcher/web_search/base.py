"""The web-search contract: `BaseWebSearch.asearch(query) -> list[WebResult]`, every provider's
HTTP call under the shared retry policy (deadline, 429 and Retry-After), and one error type.

A provider implements `_request` (one attempt: send the query, return the parsed JSON) and
`_normalise` (that JSON → WebResults). Everything else (retries, turning a failure into one
sentence naming the provider and what to do, dropping results that are not http(s) URLs) is here,
so the five providers behave the same when their API is down, slow, throttled or answers garbage.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import ClassVar, TypedDict
from urllib.parse import urlsplit

import httpx

from deepsearcher.transport.http import BadResponse, HTTPStatusError, classify_http, error_detail
from deepsearcher.transport.retry import Failure, GiveUp, RetryPolicy, call_with_retries
from deepsearcher.types.errors import MissingAPIKeyError, ProviderError
from deepsearcher.types.json import JSONObject, JSONScalar, JSONValue

__all__ = ["BaseWebSearch", "WebResult", "WebSearchError", "WebSearchOptions", "check_json_reply"]

#: Results asked of the API per query when the caller does not say.
DEFAULT_MAX_RESULTS = 5


class WebSearchOptions(TypedDict, total=False):
    """BaseWebSearch's own options: what a provider's `**kwargs` passes on to it (typed with Unpack)."""

    max_results: int
    timeout: float
    call_timeout: float
    max_retries: int


@dataclass(frozen=True)
class WebResult:
    """One search hit, the same shape from every provider."""

    title: str
    url: str
    snippet: str = ""
    date: str | None = None  # as the API gives it (ISO 8601 or its own words); None when it gives none

    def to_dict(self) -> JSONObject:
        return asdict(self)


class WebSearchError(ProviderError):
    """A web search API could not answer (down, throttled, timed out, garbage); the agents degrade
    to a private-only answer and say so."""

    error_kind = "web_search_failed"

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(f"Web search ({provider}) failed: {reason}.")
        self.provider = provider
        self.reason = reason


def check_json_reply(response: httpx.Response) -> JSONValue:
    """The parsed JSON of a 2xx reply; HTTPStatusError (with its Retry-After) or BadResponse otherwise."""
    if response.status_code >= 400:
        raise HTTPStatusError(response.status_code, error_detail(response), response.headers)
    try:
        return response.json()
    except ValueError:
        raise BadResponse(f"not JSON: {' '.join(response.text.split())[:80]!r}") from None


def _text(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


class BaseWebSearch:
    """A web search API. `timeout`: one attempt; `call_timeout`: the whole search, retries included."""

    #: The environment variable holding the key (or the server's URL for SearXNG); shown in errors.
    env_var: ClassVar[str | None] = None

    def __init__(
        self,
        max_results: int = DEFAULT_MAX_RESULTS,
        timeout: float = 10.0,
        call_timeout: float = 20.0,
        max_retries: int = 2,
    ) -> None:
        self.max_results = max_results
        self.policy = RetryPolicy(
            max_retries=max_retries, timeout=timeout, call_timeout=call_timeout, base_delay=0.3, max_retry_after=10.0
        )

    @property
    def name(self) -> str:
        return type(self).__name__

    def _setting(self, given: str | None, what: str = "api_key") -> str:
        """`given`, else the provider's environment variable; MissingAPIKeyError naming both when neither is set."""
        value = given or (os.environ.get(self.env_var) if self.env_var else None)
        if not value:
            raise MissingAPIKeyError(
                self.name,
                self.env_var,
                section="web_search",
                message=f"No {what} for web search provider {self.name}: set {self.env_var} or "
                f"provide_settings.web_search.config.{what}.",
            )
        return value

    async def asearch(self, query: str, max_results: int | None = None) -> list[WebResult]:
        """Up to `max_results` normalised hits for `query`; WebSearchError naming the provider and the cause."""
        limit = max_results or self.max_results
        try:
            payload = await call_with_retries(lambda: self._request(query, limit), self._classify, self.policy)
        except GiveUp as exc:
            raise WebSearchError(self.name, exc.reason) from None
        try:
            results = list(self._normalise(payload))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise WebSearchError(self.name, f"its reply was unreadable ({exc!r})") from None
        kept = [result for result in results if urlsplit(result.url).scheme in ("http", "https")]
        return kept[:limit]

    def _classify(self, exc: BaseException) -> Failure:
        return classify_http(exc)

    @abstractmethod
    async def _request(self, query: str, max_results: int) -> JSONValue:
        """One attempt: the API's parsed reply (raise HTTPStatusError / BadResponse / httpx errors)."""

    @abstractmethod
    def _normalise(self, payload: object) -> list[WebResult]:
        """The API's reply → WebResults (a KeyError or TypeError here means garbage)."""

    async def _get_json(
        self, url: str, params: Mapping[str, JSONScalar], headers: Mapping[str, str] | None = None
    ) -> JSONValue:
        async with httpx.AsyncClient(timeout=self.policy.timeout, follow_redirects=False) as client:
            return check_json_reply(await client.get(url, params=dict(params), headers=dict(headers or {})))

    async def _post_json(
        self, url: str, body: Mapping[str, JSONValue], headers: Mapping[str, str] | None = None
    ) -> JSONValue:
        async with httpx.AsyncClient(timeout=self.policy.timeout, follow_redirects=False) as client:
            return check_json_reply(await client.post(url, json=dict(body), headers=dict(headers or {})))

    @staticmethod
    def _result(title: object, url: object, snippet: object = "", date: object = None) -> WebResult:
        return WebResult(title=_text(title), url=_text(url), snippet=_text(snippet), date=_text(date) or None)
