"""What the IBM watsonx.ai LLM and embedding providers share: credentials and IAM tokens.

watsonx.ai takes a short-lived bearer token that IBM Cloud IAM issues for an API key
(POST {iam_url}/identity/token). Tokens are cached per key until a minute before they
expire, so a load of thousands of chunks asks IAM once. No SDK is needed (DeepSearcher
used `ibm-watsonx-ai`): the REST API is plain JSON over HTTPS.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from deepsearcher.config.api_keys import resolve_api_key
from deepsearcher.types.errors import ConfigurationError, DeepSearcherError

IAM_URL = "https://iam.cloud.ibm.com"
API_VERSION = "2024-10-08"
_REFRESH_MARGIN_S = 60.0


@dataclass(frozen=True)
class WatsonXAccount:
    """Where and as whom to call watsonx.ai."""

    api_key: str
    url: str
    project_id: str | None
    space_id: str | None
    iam_url: str
    version: str

    def scope(self) -> dict[str, str]:
        """The project_id or space_id field every request carries."""
        return {"space_id": self.space_id} if self.space_id else {"project_id": self.project_id or ""}

    def endpoint(self, path: str) -> str:
        return f"{self.url}/ml/v1/{path}?version={self.version}"


def watsonx_account(section: str, options: dict[str, Any]) -> WatsonXAccount:
    """Take api_key, url (or base_url), project_id, space_id, iam_url and version out of a
    provider's `options`, else $WATSONX_APIKEY / $WATSONX_URL / $WATSONX_PROJECT_ID (as DeepSearcher)."""
    api_key = options.pop("api_key", None)
    url = options.pop("url", None) or options.pop("base_url", None)
    options.pop("base_url", None)
    project_id, space_id = (
        options.pop("project_id", None),
        options.pop("space_id", None),
    )
    iam_url, version = options.pop("iam_url", None), options.pop("version", None)
    key = resolve_api_key("WatsonX", api_key, ["WATSONX_APIKEY", "WATSONX_API_KEY"], section=section)
    url = url or os.environ.get("WATSONX_URL")
    if not url:
        raise ConfigurationError(
            f"WatsonX needs the service URL: set $WATSONX_URL or provide_settings.{section}.config.url "
            "(e.g. https://us-south.ml.cloud.ibm.com)."
        )
    if not project_id and not space_id:
        project_id = os.environ.get("WATSONX_PROJECT_ID")
    if not project_id and not space_id:
        raise ConfigurationError(
            f"WatsonX needs a project: set $WATSONX_PROJECT_ID or provide_settings.{section}.config.project_id "
            "(or space_id)."
        )
    return WatsonXAccount(
        api_key=key or "",
        url=url.rstrip("/"),
        project_id=project_id,
        space_id=space_id,
        iam_url=(iam_url or os.environ.get("WATSONX_IAM_URL") or IAM_URL).rstrip("/"),
        version=version or API_VERSION,
    )


_tokens: dict[tuple[str, str], tuple[str, float]] = {}
_lock = threading.Lock()


def iam_token(account: WatsonXAccount, timeout: float = 30.0) -> str:
    """A valid bearer token for `account` (cached; blocking, so async callers use a thread)."""
    cache_key = (account.iam_url, account.api_key)
    with _lock:
        cached = _tokens.get(cache_key)
        if cached and cached[1] > time.monotonic():
            return cached[0]
        where = f"{account.iam_url}/identity/token"
        try:
            response = httpx.post(
                where,
                data={
                    "grant_type": "urn:ibm:params:oauth:grant-type:apikey",
                    "apikey": account.api_key,
                },
                headers={"Accept": "application/json"},
                timeout=timeout,
            )
        except httpx.HTTPError as exc:
            raise DeepSearcherError(
                f"WatsonX: cannot reach IBM Cloud IAM at {where}: {exc}. Check the network or iam_url."
            ) from exc
        if response.status_code != 200:
            raise DeepSearcherError(
                f"WatsonX: IBM Cloud IAM at {where} refused the API key (HTTP {response.status_code}: "
                f"{response.text[:160]}). Check $WATSONX_APIKEY."
            )
        body = response.json()
        token = str(body.get("access_token") or "")
        if not token:
            raise DeepSearcherError(f"WatsonX: IBM Cloud IAM at {where} answered without an access_token.")
        lifetime = float(body.get("expires_in") or 3600)
        _tokens[cache_key] = (
            token,
            time.monotonic() + max(0.0, lifetime - _REFRESH_MARGIN_S),
        )
        return token
