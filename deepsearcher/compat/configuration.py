"""DeepSearcher's `configuration` module: `init_config` builds the components once for the process.

`init_config(config)` builds a `Components` (see deepsearcher/app/components.py) and swaps this
module's one reference under a lock; DeepSearcher's module-level names (`llm`,
`embedding_model`, `file_loader`, `vector_db`, `web_crawler`, `default_searcher`, `naive_rag`,
...) read that reference, so a script never sees half of a switch. Components whose provider
settings did not change are reused (the embedding model takes seconds to load).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Collection
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any, Literal

from deepsearcher.app.components import ComponentBuilder, Components, build_components, create_provider, provider_class
from deepsearcher.app.components import registries as _registries  # noqa: F401 - an older import of the tests
from deepsearcher.config import Configuration
from deepsearcher.config.settings import default_config_path
from deepsearcher.llm.base import BaseLLM
from deepsearcher.loader.web_crawler.base import BaseCrawler
from deepsearcher.types.errors import DeepSearcherError

__all__ = [
    "DEFAULT_CONFIG_YAML_PATH",
    "Components",
    "Configuration",
    "FeatureType",
    "ModuleFactory",
    "build_components",
    "current",
    "init_config",
]

#: DeepSearcher's name for the built-in defaults file (ours: the packaged default_config.yaml).
DEFAULT_CONFIG_YAML_PATH = str(default_config_path())

#: DeepSearcher's names: the package folder, and the features `set_provider_config` takes.
current_dir = str(Path(__file__).resolve().parent.parent)
FeatureType = Literal["llm", "embedding", "file_loader", "web_crawler", "vector_db"]

#: The package DeepSearcher's factory read each feature's class from.
_PACKAGES: dict[str, str] = {
    "llm": "deepsearcher.llm",
    "embedding": "deepsearcher.embedding",
    "file_loader": "deepsearcher.loader.file_loader",
    "web_crawler": "deepsearcher.loader.web_crawler",
    "vector_db": "deepsearcher.vector_db",
}


class ModuleFactory:
    """DeepSearcher's factory: one component per feature from `provide_settings` by provider name."""

    def __init__(self, config: Configuration) -> None:
        self.config = config

    def provider_class(self, feature: str) -> type:
        """The class configured for `feature` (an unknown name raises, naming the allowed ones)."""
        patched = self._patched(feature)
        return patched if isinstance(patched, type) else provider_class(self.config, feature)

    def create(self, feature: str, **overrides: Any) -> Any:
        patched = self._patched(feature)
        if patched is None:
            return create_provider(self.config, feature, **overrides)
        return patched(**{**(self.config.get_provider_config(feature).get("config") or {}), **overrides})

    def _patched(self, feature: str) -> Any:
        """What a caller set on the feature's package under the configured provider name, if anything.

        DeepSearcher's factory read the class off the package (`getattr(deepsearcher.llm, "OpenAI")`),
        so `patch("deepsearcher.llm.OpenAI", Fake)` made it build `Fake`; tests written that way
        keep working. Our packages hold no provider attributes of their own (a registry serves
        them), so only a name somebody assigned is found here, and it is called as DeepSearcher did.
        """
        package = sys.modules.get(_PACKAGES.get(feature, ""))
        name = self.config.get_provider_config(feature).get("provider")
        found = vars(package).get(name) if package is not None and isinstance(name, str) else None
        return None if isinstance(found, ModuleType) else found  # `provider: watsonx` is not llm/watsonx.py

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
_builder = ComponentBuilder()

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


def init_config(config: Configuration | None = None, *, skip: Collection[str] = ()) -> None:
    """Build every configured component and the agents; safe to call again to switch.

    `init_config(config=...)` as in DeepSearcher; None means the built-in defaults.
    `skip`: optional parts ("llm", "web_crawler") the caller will not use, left unbuilt (the
    LLM's SDK alone takes ~1 s to import); their provider names are still checked.
    """
    global _current
    configuration = config if config is not None else Configuration()
    factory = ModuleFactory(configuration)
    # a class patched onto a feature's package (DeepSearcher's tests do) is built, as its factory did,
    # by a builder of its own: the shared one keeps reusing the real parts
    patched = any(factory._patched(feature) is not None for feature in _PACKAGES)
    builder = ComponentBuilder(create=_factory_create) if patched else _builder
    with _switch_lock:  # one switch at a time; readers keep the old object until the swap
        _current = builder.build(configuration, skip=skip)


def _factory_create(configuration: Configuration, feature: str) -> object:
    return ModuleFactory(configuration).create(feature)


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


_NOT_CONFIGURED = "DeepSearcher is not configured: call init_config(Configuration()) first."


def require_web_crawler() -> BaseCrawler:
    """The configured crawler, or the reason it is missing (no key, missing extra...)."""
    if _current is None:
        raise DeepSearcherError(_NOT_CONFIGURED)
    return _current.require_web_crawler()


def require_llm() -> BaseLLM:
    """The configured LLM, or the reason it is missing (no key, missing extra...)."""
    if _current is None:
        raise DeepSearcherError(_NOT_CONFIGURED)
    return _current.require_llm()


def ensure_initialized() -> None:
    """Initialise with the built-in defaults when the caller has not configured anything."""
    current()
