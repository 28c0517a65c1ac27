"""Ollama's OpenAI-compatible endpoint: local models, no key."""

from __future__ import annotations

import os
import urllib.parse

from deepsearcher.config.registry import register_provider
from deepsearcher.llm.openai_llm import OpenAI

OLLAMA_URL = "http://localhost:11434/v1"


def _ollama_url_from_env() -> str | None:
    """$OLLAMA_BASE_URL as given, or $OLLAMA_HOST ("host:port" or a URL) + "/v1"."""
    if os.environ.get("OLLAMA_BASE_URL"):
        return os.environ["OLLAMA_BASE_URL"]
    host = os.environ.get("OLLAMA_HOST", "").strip()
    if not host:
        return None
    if "://" not in host:
        host = "http://" + host
    if host.count(":") < 2:  # no port given
        host += ":11434"
    host = host.rstrip("/")
    return host if host.endswith("/v1") else host + "/v1"


@register_provider("llm")
class Ollama(OpenAI):
    """A model served by Ollama (`ollama pull qwen2.5:7b`). base_url defaults to
    http://localhost:11434/v1, overridden by $OLLAMA_BASE_URL or $OLLAMA_HOST."""

    default_model = "qwen2.5:7b"
    default_base_url = OLLAMA_URL
    api_key_env = None
    base_url_env = ()
    requires_api_key = False
    supports_json_mode = True

    def _local_server_default(self, given: str | bool | None) -> str | bool | None:
        return "Ollama" if given is None else given

    def _resolve_base_url(self, base_url: str | None) -> str | None:
        url = (base_url or _ollama_url_from_env() or OLLAMA_URL).rstrip("/")
        # DeepSearcher configs name Ollama's native root (http://localhost:11434): add /v1.
        if urllib.parse.urlparse(url).path in ("", "/"):
            url += "/v1"
        return url
