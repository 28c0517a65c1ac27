"""`Components`: everything one configuration built, as one immutable object, and the builder.

A front-end or a library caller holds one `Components` and passes it down; switching
configuration builds a new object and swaps the caller's one reference, so no reader
ever sees a new store beside the old agents. Nothing in the package keeps a
`Components` in a module global: the CLI builds one per command, the server keeps one
on its app state, the MCP server on its tools object, and DeepSearcher's module-level
API (`deepsearcher.configuration`) keeps its own.

`ComponentBuilder` is the one place that builds them. It remembers what it built, so a
rebuild with unchanged provider settings reuses the instance (the embedding model takes
seconds to load), and closes an instance whose settings changed.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from deepsearcher.config import Configuration
from deepsearcher.config.registry import ProviderRegistry, UnknownProviderError
from deepsearcher.config.settings import Settings
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.llm.base import BaseLLM
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.web_crawler.base import BaseCrawler
from deepsearcher.types.errors import ConfigurationError, DeepSearcherError, NotReadyError, UnknownOptionError
from deepsearcher.vector_db.base import BaseVectorDB

if TYPE_CHECKING:
    from deepsearcher.agent.base import RAGAgent
    from deepsearcher.agent.retriever import Retriever
    from deepsearcher.agent.web_cache import WebCache
    from deepsearcher.agent.web_source import WebSettings, WebSource

logger = logging.getLogger(__name__)

__all__ = [
    "OPTIONAL_PARTS",
    "ComponentBuilder",
    "Components",
    "build_components",
    "check_configuration",
    "create_provider",
    "provider_class",
]

#: The parts a configuration may lack and still load and search (no API key is a normal state).
OPTIONAL_PARTS = ("llm", "web_crawler", "web_search")


@dataclass(frozen=True)
class Components:
    """The configured LLM, embedding model, store, loader, crawler and agents.

    `llm` and `web_crawler` may be missing (no API key is a normal state for loading and
    retrieval); then `llm_error` / `web_crawler_error` say why, and `require_*` raise it.
    """

    config: Configuration
    embedding_model: BaseEmbedding
    file_loader: BaseLoader
    vector_db: BaseVectorDB
    llm: BaseLLM | None = None
    llm_error: DeepSearcherError | None = None
    web_crawler: BaseCrawler | None = None
    web_crawler_error: DeepSearcherError | None = None
    agents: Mapping[str, RAGAgent] = field(default_factory=lambda: MappingProxyType({}))
    #: the web beside the collections (questions asked with `web` on); None without an LLM
    web_source: WebSource | None = None

    @property
    def web_settings(self) -> WebSettings:
        """The `web:` section, checked."""
        from deepsearcher.agent.web_source import check_web_settings

        return check_web_settings(self.config.web_settings)

    @cached_property
    def web_cache(self) -> WebCache:
        """The cache of fetched web pages in this store (listed and cleared by `deepsearcher web-cache`)."""
        from deepsearcher.agent.web_cache import WebCache

        load = self.config.load
        return WebCache(
            self.embedding_model,
            self.vector_db,
            ttl_hours=self.web_settings.cache_ttl_hours,
            chunk_size=load.chunk_size,
            chunk_overlap=load.chunk_overlap,
        )

    @property
    def query_settings(self) -> Settings:
        return self.config.query_settings

    @property
    def load_settings(self) -> Settings:
        return self.config.load_settings

    @cached_property
    def retriever(self) -> Retriever:
        """One retriever per Components, so each collection's model check is made once."""
        from deepsearcher.agent.retriever import Retriever

        return Retriever(self.embedding_model, self.vector_db)

    def require_llm(self) -> BaseLLM:
        """The LLM, or the reason there is none (no key, missing extra...)."""
        if self.llm is None:
            raise self.llm_error or NotReadyError("No LLM is configured (provide_settings.llm).")
        return self.llm

    def require_web_crawler(self) -> BaseCrawler:
        """The crawler, or the reason there is none."""
        if self.web_crawler is None:
            raise self.web_crawler_error or NotReadyError(
                "No web crawler is configured (provide_settings.web_crawler)."
            )
        return self.web_crawler

    def agent(self, name: str | None = None) -> RAGAgent:
        """The agent `name` (default: query_settings.agent, else auto); needs the LLM."""
        from deepsearcher.agent.catalog import check_agent

        self.require_llm()
        default = self.query_settings.get("agent")
        return self.agents[check_agent(name or (str(default) if default else "auto"))]

    def close(self) -> None:
        """Close the store (the one part holding a file lock or a connection)."""
        self.vector_db.close()


def registries() -> dict[str, ProviderRegistry]:
    """Feature name → its provider registry."""
    from deepsearcher.embedding import registry as embedding_registry
    from deepsearcher.llm import registry as llm_registry
    from deepsearcher.loader.file_loader import registry as file_loader_registry
    from deepsearcher.loader.web_crawler import registry as web_crawler_registry
    from deepsearcher.vector_db import registry as vector_db_registry
    from deepsearcher.web_search import registry as web_search_registry

    return {
        "llm": llm_registry,
        "embedding": embedding_registry,
        "file_loader": file_loader_registry,
        "web_crawler": web_crawler_registry,
        "vector_db": vector_db_registry,
        "web_search": web_search_registry,
    }


def provider_class(config: Configuration, feature: str) -> type:
    """The class configured for `feature` (an unknown name raises, naming the allowed ones)."""
    return registries()[feature].get(config.get_provider_config(feature)["provider"])


def create_provider(config: Configuration, feature: str, **overrides: object) -> object:
    """A new instance of `feature`'s configured provider, its settings checked against its options first."""
    from deepsearcher.app.provider_options import check_provider_config

    setting = config.get_provider_config(feature)
    provider = setting["provider"]
    cls = provider_class(config, feature)
    kwargs = {**(setting.get("config") or {}), **overrides}
    if feature == "vector_db":
        from deepsearcher.app.embedded_store import fallback_store

        replacement = fallback_store(cls.__name__, kwargs)
        if replacement is not None:
            provider, kwargs = replacement
            cls = registries()[feature].get(provider)
    check_provider_config(cls, feature, provider, kwargs)
    try:
        instance = cls(**kwargs)
    except TypeError as exc:
        raise DeepSearcherError(f"provide_settings.{feature}.config does not fit provider '{provider}': {exc}") from exc
    from deepsearcher.llm.base import BaseLLM

    if isinstance(instance, BaseLLM):
        instance.require_credentials()  # a configured LLM with no key fails when it is built, not at its first call
    return instance


def check_configuration(configuration: Configuration, skip: Collection[str] = ()) -> None:
    """Every provider name and option, the default agent and query_settings checked against their
    schemas, before anything is built: a typo fails in milliseconds, not after a model load. A part
    in `skip` has its names checked, not what its SDK would take (importing the SDK costs a second)."""
    from deepsearcher.agent.catalog import check_agent, check_query_settings
    from deepsearcher.app.provider_options import check_provider_config

    for feature in registries():
        setting = configuration.get_provider_config(feature)
        cls = provider_class(configuration, feature)
        config = setting.get("config") or {}
        check_provider_config(cls, feature, setting["provider"], config, deep=feature not in skip)
    agent = configuration.query_settings.get("agent")
    if agent is not None:
        check_agent(str(agent), "query_settings.agent", ConfigurationError)
    check_query_settings(configuration.query_settings)
    from deepsearcher.agent.web_source import check_web_settings

    check_web_settings(configuration.web_settings)


def _settings_key(configuration: Configuration, feature: str) -> str:
    # The working directory is part of the key: uri "./milvus.db" names another file elsewhere.
    setting = {"cwd": os.getcwd(), **configuration.get_provider_config(feature)}
    return json.dumps(setting, sort_keys=True, default=str)


class ComponentBuilder:
    """Builds `Components`, reusing the parts whose provider settings did not change.

    One builder per holder of components (a CLI run, a server, DeepSearcher's module API):
    two holders never share or close each other's instances.
    """

    def __init__(self, create: Callable[[Configuration, str], object] = create_provider) -> None:
        """`create`: how one feature's instance is made (DeepSearcher's module API passes its
        factory, which honours a class patched onto the feature's package)."""
        self._built: dict[str, tuple[str, object]] = {}
        self._lock = threading.RLock()
        self._create = create

    def build(self, configuration: Configuration, *, skip: Collection[str] = ()) -> Components:
        """Every configured component and the agents; the optional parts named in `skip`
        ("llm", "web_crawler") are left unbuilt (the LLM's SDK alone takes ~1 s to import),
        their provider names still checked."""
        with self._lock:
            check_configuration(configuration, skip)
            embedding = self._part(configuration, "embedding")
            file_loader = self._part(configuration, "file_loader")
            vector_db = self._part(configuration, "vector_db")
            llm, llm_error = self._optional(configuration, "llm", skip)
            crawler, crawler_error = self._optional(configuration, "web_crawler", skip)
            assert isinstance(embedding, BaseEmbedding) and isinstance(vector_db, BaseVectorDB)
            agents = self._agents(configuration, llm, embedding, vector_db)
            components = Components(
                config=configuration,
                embedding_model=embedding,
                file_loader=file_loader,  # type: ignore[arg-type]  # checked by the registry's feature
                vector_db=vector_db,
                llm=llm,  # type: ignore[arg-type]
                llm_error=llm_error,
                web_crawler=crawler,  # type: ignore[arg-type]
                web_crawler_error=crawler_error,
                agents=MappingProxyType(agents),
            )
            if not agents:
                return components
            web_source = self._web_source(configuration, components)
            for agent in agents.values():
                agent.web_source = web_source
            return replace(components, web_source=web_source)

    def _web_source(self, configuration: Configuration, components: Components) -> WebSource:
        """The web search provider (or why there is none: a question asked with web on then says so),
        the built-in crawler under the `web:` budgets, and the web cache, as one WebSource."""
        from deepsearcher.agent.web_source import WebSource

        search, search_error = self._optional(configuration, "web_search", ())
        settings = components.web_settings
        crawler = registries()["web_crawler"].get("HttpCrawler")(
            max_depth=0,
            max_pages=settings.max_pages,
            timeout=settings.fetch_timeout,
            max_bytes=settings.max_page_bytes,
            allow_private_network=settings.allow_private_network,
        )
        return WebSource(search, components.web_cache, crawler, settings, search_error)  # type: ignore[arg-type]

    def close(self) -> None:
        """Close every part built here that has a `close` (the store's file lock, an HTTP client)."""
        with self._lock:
            for _, part in self._built.values():
                _close(part)
            self._built.clear()

    def _part(self, configuration: Configuration, feature: str) -> object:
        """`feature`'s instance, the previous one when its settings are unchanged."""
        key = _settings_key(configuration, feature)
        previous = self._built.get(feature)
        if previous is not None and previous[0] == key:
            return previous[1]
        if previous is not None:
            _close(previous[1])
            del self._built[feature]
        part = self._create(configuration, feature)
        self._built[feature] = (key, part)
        return part

    def _optional(
        self, configuration: Configuration, feature: str, skip: Collection[str]
    ) -> tuple[object | None, DeepSearcherError | None]:
        if feature in skip:
            provider_class(configuration, feature)  # a typo in the config is reported all the same
            return None, NotReadyError(f"The {feature} was not set up: this command does not use it.")
        try:
            return self._part(configuration, feature), None
        except (UnknownProviderError, UnknownOptionError):
            raise  # a typo in the config is not "no LLM yet"
        except DeepSearcherError as exc:
            return self._missing(feature, exc)

    def _missing(self, feature: str, exc: DeepSearcherError) -> tuple[None, DeepSearcherError]:
        self._built.pop(feature, None)
        logger.info("%s not available: %s", feature, exc)
        return None, exc

    @staticmethod
    def _agents(
        configuration: Configuration, llm: object | None, embedding: BaseEmbedding, vector_db: BaseVectorDB
    ) -> dict[str, RAGAgent]:
        if llm is None:
            return {}
        from deepsearcher.agent.catalog import build_agents

        return build_agents(llm, embedding, vector_db, configuration.query_settings)  # type: ignore[arg-type]


def _close(part: object) -> None:
    close = getattr(part, "close", None)
    if callable(close):
        close()


def build_components(
    configuration: Configuration, *, skip: Collection[str] = (), builder: ComponentBuilder | None = None
) -> Components:
    """`Components` for `configuration` (a fresh builder unless one is given to reuse parts)."""
    return (builder or ComponentBuilder()).build(configuration, skip=skip)
