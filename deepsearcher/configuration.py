"""The composition root: build the configured components and expose them module-wide.

Module-level names (`llm`, `embedding_model`, `file_loader`, `vector_db`,
`web_crawler`, `default_searcher`, `naive_rag`) match DeepSearcher so existing code
keeps working. `init_config` may be called again to switch configuration; components
whose provider settings did not change are reused (the embedding model takes seconds
to load).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from deepsearcher.config import Configuration
from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.types.errors import DeepSearcherError

logger = logging.getLogger(__name__)

__all__ = ["Configuration", "ModuleFactory", "init_config"]


def _registries() -> dict[str, ProviderRegistry]:
    from deepsearcher.embedding import registry as embedding_registry
    from deepsearcher.llm import registry as llm_registry
    from deepsearcher.loader.file_loader import registry as file_loader_registry
    from deepsearcher.loader.web_crawler import registry as web_crawler_registry
    from deepsearcher.vector_db import registry as vector_db_registry

    return {
        "llm": llm_registry,
        "embedding": embedding_registry,
        "file_loader": file_loader_registry,
        "web_crawler": web_crawler_registry,
        "vector_db": vector_db_registry,
    }


class ModuleFactory:
    """Builds one component per feature from `provide_settings` by provider name."""

    def __init__(self, config: Configuration) -> None:
        self.config = config

    def create(self, feature: str, **overrides: Any) -> Any:
        setting = self.config.get_provider_config(feature)
        provider = setting["provider"]
        cls = _registries()[feature].get(provider)
        kwargs = {**(setting.get("config") or {}), **overrides}
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise DeepSearcherError(
                f"provide_settings.{feature}.config does not fit provider '{provider}': {exc}"
            ) from exc

    def create_llm(self) -> Any:
        return self.create("llm")

    def create_embedding(self) -> Any:
        return self.create("embedding")

    def create_file_loader(self) -> Any:
        return self.create("file_loader")

    def create_web_crawler(self) -> Any:
        return self.create("web_crawler")

    def create_vector_db(self) -> Any:
        return self.create("vector_db")


config: Configuration | None = None
module_factory: ModuleFactory | None = None
llm: Any = None
llm_error: DeepSearcherError | None = None
embedding_model: Any = None
file_loader: Any = None
vector_db: Any = None
web_crawler: Any = None
web_crawler_error: DeepSearcherError | None = None
default_searcher: Any = None
naive_rag: Any = None

_built: dict[str, tuple[str, Any]] = {}


def _settings_key(configuration: Configuration, feature: str) -> str:
    # The working directory is part of the key: uri "./milvus.db" names another file elsewhere.
    setting = {"cwd": os.getcwd(), **configuration.get_provider_config(feature)}
    return json.dumps(setting, sort_keys=True, default=str)


def _build(factory: ModuleFactory, feature: str) -> Any:
    """Build `feature`, reusing the previous instance when its settings are unchanged."""
    key = _settings_key(factory.config, feature)
    previous = _built.get(feature)
    if previous is not None and previous[0] == key:
        return previous[1]
    if previous is not None and hasattr(previous[1], "close"):
        previous[1].close()
    component = factory.create(feature)
    _built[feature] = (key, component)
    return component


def init_config(config: Configuration | None = None) -> None:
    """Build every configured component and the agents; safe to call again to switch.

    `init_config(config=...)` as in DeepSearcher; None means the built-in defaults.
    """
    _init_config(config if config is not None else Configuration())


def _init_config(configuration: Configuration) -> None:
    global config, module_factory, llm, llm_error, embedding_model, file_loader
    global vector_db, web_crawler, web_crawler_error, default_searcher, naive_rag
    config = configuration
    module_factory = ModuleFactory(configuration)
    embedding_model = _build(module_factory, "embedding")
    file_loader = _build(module_factory, "file_loader")
    vector_db = _build(module_factory, "vector_db")
    # No API key is a normal state for file loading and retrieval: these two report
    # their error when they are first needed instead of blocking everything else.
    llm, llm_error = _build_optional(module_factory, "llm")
    web_crawler, web_crawler_error = _build_optional(module_factory, "web_crawler")
    default_searcher, naive_rag = _build_agents(configuration)


def _build_optional(factory: ModuleFactory, feature: str) -> tuple[Any, DeepSearcherError | None]:
    try:
        return _build(factory, feature), None
    except DeepSearcherError as exc:
        _built.pop(feature, None)
        logger.info("%s not available: %s", feature, exc)
        return None, exc


def _build_agents(configuration: Configuration) -> tuple[Any, Any]:
    if llm is None:
        return None, None
    from deepsearcher.agent import ChainOfRAG, DeepSearch, NaiveRAG, RAGRouter

    max_iter = configuration.query_settings.get("max_iter", 3)
    top_k = configuration.query_settings.get("top_k", 10)
    common = {"llm": llm, "embedding_model": embedding_model, "vector_db": vector_db}
    searcher = RAGRouter(
        llm=llm,
        rag_agents=[
            DeepSearch(max_iter=max_iter, **common),
            ChainOfRAG(max_iter=max_iter, early_stopping=bool(configuration.query_settings.get("early_stopping", False)), **common),
        ],
    )
    naive = NaiveRAG(top_k=top_k, **common)
    return searcher, naive


def require_web_crawler() -> Any:
    """The configured crawler, or the reason it is missing (no key, missing extra...)."""
    if web_crawler is None:
        raise web_crawler_error or DeepSearcherError("DeepSearcher is not configured: call init_config(Configuration()) first.")
    return web_crawler


def require_llm() -> Any:
    """The configured LLM, or the reason it is missing (no key, missing extra...)."""
    if llm is None:
        if llm_error is not None:
            raise llm_error
        raise DeepSearcherError("DeepSearcher is not configured: call init_config(Configuration()) first.")
    return llm


def ensure_initialized() -> None:
    """Initialise with the built-in defaults when the caller has not configured anything."""
    if config is None:
        init_config(Configuration())
