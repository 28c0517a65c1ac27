"""The composition root: build the configured components and expose them module-wide.

`build_components(config)` is the one function that builds a `Components` object.
`init_config` builds one and swaps a single reference under a lock; DeepSearcher's
module-level names (`llm`, `embedding_model`, `file_loader`, `vector_db`, `web_crawler`,
`default_searcher`, `naive_rag`, ...) are a thin facade reading that reference, so
existing code keeps working and never sees half of a switch. Components whose provider
settings did not change are reused (the embedding model takes seconds to load).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Collection
from types import MappingProxyType
from typing import Any

from deepsearcher.app.components import Components
from deepsearcher.config import Configuration
from deepsearcher.config.registry import ProviderRegistry, UnknownProviderError
from deepsearcher.types.errors import ConfigurationError, DeepSearcherError, NotReadyError

logger = logging.getLogger(__name__)

__all__ = [
    "Components",
    "Configuration",
    "ModuleFactory",
    "build_components",
    "current",
    "init_config",
]


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

    def provider_class(self, feature: str) -> Any:
        """The class configured for `feature` (an unknown name raises, naming the allowed ones)."""
        return _registries()[feature].get(self.config.get_provider_config(feature)["provider"])

    def create(self, feature: str, **overrides: Any) -> Any:
        setting = self.config.get_provider_config(feature)
        provider = setting["provider"]
        cls = self.provider_class(feature)
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


_current: Components | None = None
_switch_lock = threading.RLock()
_built: dict[str, tuple[str, Any]] = {}

#: DeepSearcher's module-level names, read from the current Components (None before init_config).
_FACADE = (
    "llm",
    "llm_error",
    "embedding_model",
    "file_loader",
    "vector_db",
    "web_crawler",
    "web_crawler_error",
)


def __getattr__(name: str) -> Any:
    components = _current
    if name == "config":
        return components.config if components is not None else None
    if name == "module_factory":
        return ModuleFactory(components.config) if components is not None else None
    if name == "agents":
        return components.agents if components is not None else MappingProxyType({})
    if name in ("default_searcher", "naive_rag"):
        return components.agents.get("auto" if name == "default_searcher" else "naive") if components else None
    if name in _FACADE:
        return getattr(components, name) if components is not None else None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def init_config(config: Configuration | None = None, *, skip: Collection[str] = ()) -> None:
    """Build every configured component and the agents; safe to call again to switch.

    `init_config(config=...)` as in DeepSearcher; None means the built-in defaults.
    `skip`: optional parts ("llm", "web_crawler") the caller will not use, left unbuilt (the
    LLM's SDK alone takes ~1 s to import); their provider names are still checked.
    """
    _init_config(config if config is not None else Configuration(), skip)


def _init_config(configuration: Configuration, skip: Collection[str] = ()) -> None:
    global _current
    with _switch_lock:  # one switch at a time; readers keep the old object until the swap
        _current = build_components(configuration, skip=skip)


def current() -> Components:
    """The Components of the last `init_config` (the built-in defaults when there was none)."""
    components = _current
    if components is None:
        with _switch_lock:
            if _current is None:
                init_config(Configuration())
        components = _current
    assert components is not None
    return components


def build_components(configuration: Configuration, *, skip: Collection[str] = ()) -> Components:
    """Every configured component and the agents, from `configuration` (unchanged providers reused).

    The optional parts named in `skip` are not built (see `init_config`).
    """
    from deepsearcher.agent.catalog import check_agent

    if configuration.query_settings.get("agent") is not None:
        check_agent(
            configuration.query_settings["agent"],
            "query_settings.agent",
            ConfigurationError,
        )
    factory = ModuleFactory(configuration)
    required = (
        ("embedding_model", "embedding"),
        ("file_loader", "file_loader"),
        ("vector_db", "vector_db"),
    )
    parts: dict[str, Any] = {name: _build(factory, feature) for name, feature in required}
    # No API key is a normal state for file loading and retrieval: these two report
    # their error when they are first needed instead of blocking everything else.
    parts["llm"], parts["llm_error"] = _build_optional(factory, "llm", skip)
    parts["web_crawler"], parts["web_crawler_error"] = _build_optional(factory, "web_crawler", skip)
    agents = _build_agents(configuration, parts["llm"], parts["embedding_model"], parts["vector_db"])
    return Components(config=configuration, agents=MappingProxyType(agents), **parts)


def _build_optional(
    factory: ModuleFactory, feature: str, skip: Collection[str] = ()
) -> tuple[Any, DeepSearcherError | None]:
    if feature in skip:
        factory.provider_class(feature)  # a typo in the config is reported all the same
        return None, NotReadyError(f"The {feature} was not set up: this command does not use it.")
    try:
        return _build(factory, feature), None
    except UnknownProviderError:
        raise  # a typo in the config is not "no LLM yet"
    except DeepSearcherError as exc:
        _built.pop(feature, None)
        logger.info("%s not available: %s", feature, exc)
        return None, exc


def _build_agents(configuration: Configuration, llm: Any, embedding_model: Any, vector_db: Any) -> dict[str, Any]:
    if llm is None:
        return {}
    from deepsearcher.agent.catalog import build_agents

    settings = {"max_iter": 3, "top_k": 10, **configuration.query_settings}
    return build_agents(llm, embedding_model, vector_db, settings)


_NOT_CONFIGURED = "DeepSearcher is not configured: call init_config(Configuration()) first."


def require_web_crawler() -> Any:
    """The configured crawler, or the reason it is missing (no key, missing extra...)."""
    if _current is None:
        raise DeepSearcherError(_NOT_CONFIGURED)
    return _current.require_web_crawler()


def require_llm() -> Any:
    """The configured LLM, or the reason it is missing (no key, missing extra...)."""
    if _current is None:
        raise DeepSearcherError(_NOT_CONFIGURED)
    return _current.require_llm()


def ensure_initialized() -> None:
    """Initialise with the built-in defaults when the caller has not configured anything."""
    current()
