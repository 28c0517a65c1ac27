"""`Components`: everything one configuration built, as one immutable object.

A front-end or a library caller holds one `Components` and passes it down; switching
configuration builds a new object and swaps one reference, so no reader ever sees a new
store beside the old agents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from deepsearcher.config import Configuration
from deepsearcher.types.errors import DeepSearcherError, NotReadyError

__all__ = ["Components"]


@dataclass(frozen=True)
class Components:
    """The configured LLM, embedding model, store, loader, crawler and agents.

    `llm` and `web_crawler` may be missing (no API key is a normal state for loading and
    retrieval); then `llm_error` / `web_crawler_error` say why, and `require_*` raise it.
    """

    config: Configuration
    embedding_model: Any
    file_loader: Any
    vector_db: Any
    llm: Any = None
    llm_error: DeepSearcherError | None = None
    web_crawler: Any = None
    web_crawler_error: DeepSearcherError | None = None
    agents: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def query_settings(self) -> Mapping[str, Any]:
        return self.config.query_settings

    @property
    def load_settings(self) -> Mapping[str, Any]:
        return self.config.load_settings

    def require_llm(self) -> Any:
        """The LLM, or the reason there is none (no key, missing extra...)."""
        if self.llm is None:
            raise self.llm_error or NotReadyError("No LLM is configured (provide_settings.llm).")
        return self.llm

    def require_web_crawler(self) -> Any:
        """The crawler, or the reason there is none."""
        if self.web_crawler is None:
            raise self.web_crawler_error or NotReadyError(
                "No web crawler is configured (provide_settings.web_crawler)."
            )
        return self.web_crawler

    def agent(self, name: str | None = None) -> Any:
        """The agent `name` (default: query_settings.agent, else auto); needs the LLM."""
        from deepsearcher.agent.catalog import check_agent

        self.require_llm()
        return self.agents[check_agent(name or self.query_settings.get("agent") or "auto")]
