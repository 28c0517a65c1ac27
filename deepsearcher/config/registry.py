"""Provider registries: resolve a provider name from config.yaml to a class.

Each feature package (llm, embedding, vector_db, ...) owns one registry. A name is
looked up, in order, among: classes registered with `@register_provider` in the
feature's own package (its modules are imported on first lookup, so adding a provider
is adding one file), Python entry points in the group `deepsearcher.providers` named
`<feature>.<Name>`, and finally a dotted path `package.module:Class`.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, TypeVar

from deepsearcher.types.errors import ConfigurationError

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "deepsearcher.providers"
T = TypeVar("T", bound=type)

#: Every class registered with @register_provider, by feature (kept for the process lifetime).
_REGISTERED: dict[str, list[tuple[str, type, dict[str, Any]]]] = {}


class UnknownProviderError(ConfigurationError):
    """A provider name no registry knows: a typo in the config, reported at once (never as a
    missing optional part), with the closest registered name."""


@dataclass
class ProviderInfo:
    """What `deepsearcher providers` shows about one provider."""

    name: str
    cls: Any  # the provider class (its own constructor and classmethods, unknown here)
    extra: str | None = None
    requires: tuple[str, ...] = ()
    env_var: str | None = None
    aliases: tuple[str, ...] = ()
    source: str = "built-in"
    meta: dict[str, Any] = field(default_factory=dict)


def register_provider(
    feature: str,
    name: str | None = None,
    *,
    aliases: tuple[str, ...] = (),
    extra: str | None = None,
    requires: tuple[str, ...] = (),
    env_var: str | None = None,
) -> Callable[[T], T]:
    """Class decorator: make `cls` available under `name` (default: the class name)."""

    def decorator(cls: T) -> T:
        info = {
            "extra": extra,
            "requires": requires,
            "env_var": env_var,
            "aliases": aliases,
        }
        _REGISTERED.setdefault(feature, []).append((name or cls.__name__, cls, info))
        return cls

    return decorator


class ProviderRegistry:
    """Name → provider class for one feature."""

    def __init__(self, feature: str, packages: tuple[str, ...]) -> None:
        self.feature = feature
        self.packages = packages
        self._providers: dict[str, ProviderInfo] = {}
        self._aliases: dict[str, str] = {}
        self._discovered = False
        self._lock = threading.RLock()

    def _absorb_registered(self) -> None:
        for name, cls, info in _REGISTERED.get(self.feature, []):
            if name not in self._providers or self._providers[name].cls is not cls:
                self._add(ProviderInfo(name=name, cls=cls, **info))

    def _add(self, info: ProviderInfo) -> None:
        self._providers[info.name] = info
        for alias in info.aliases:
            self._aliases[alias] = info.name

    def _discover(self) -> None:
        """Import every module of the feature's packages once so their decorators run.

        Locked, and marked done only at the end: a lookup from another thread must not
        see a half-imported registry.
        """
        if self._discovered:
            return
        with self._lock:
            if not self._discovered:
                self._import_all()
                self._discovered = True

    def _import_all(self) -> None:
        for package_name in self.packages:
            package = importlib.import_module(package_name)
            for module in pkgutil.iter_modules(package.__path__, prefix=f"{package_name}."):
                if module.name.rsplit(".", 1)[-1].startswith("_"):
                    continue
                importlib.import_module(module.name)
        self._absorb_registered()
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            feature, _, name = ep.name.partition(".")
            if feature == self.feature and name not in self._providers:
                self._providers[name] = ProviderInfo(
                    name=name,
                    cls=_LazyEntryPoint,
                    source=f"entry point {ep.value}",
                    meta={"ep": ep},
                )

    def names(self) -> list[str]:
        self._discover()
        self._absorb_registered()
        return sorted(self._providers)

    def infos(self) -> list[ProviderInfo]:
        self._discover()
        self._absorb_registered()
        return [self._providers[name] for name in sorted(self._providers)]

    def _import_defining(self, name: str) -> None:
        """Import only the feature's modules whose source names `name` (as a class or a quoted string).

        A command that builds the default OpenAI LLM then imports one provider module, not
        all twenty (some import their SDK's types at the top). Full discovery stays the
        fallback, so a name this scan misses is still found."""
        pattern = re.compile(rf"class {re.escape(name)}\b|[\"']{re.escape(name)}[\"']")
        for package_name in self.packages:
            package = importlib.import_module(package_name)
            for module in pkgutil.iter_modules(package.__path__, prefix=f"{package_name}."):
                if module.name.rsplit(".", 1)[-1].startswith("_") or module.name in sys.modules:
                    continue
                if pattern.search(_source_of(module)):
                    importlib.import_module(module.name)
        self._absorb_registered()

    def _lookup(self, name: str) -> ProviderInfo | None:
        self._absorb_registered()  # classes registered after discovery (user code) count too
        info = self._providers.get(self._aliases.get(name, name))
        if info is None and not self._discovered:
            with self._lock:
                self._import_defining(name)
            info = self._providers.get(self._aliases.get(name, name))
        if info is None:
            self._discover()
            self._absorb_registered()
            info = self._providers.get(self._aliases.get(name, name))
        return info

    def get(self, name: str) -> type:
        """Return the provider class for `name`, or raise naming the allowed values."""
        info = self._lookup(name)
        if info is not None:
            if info.cls is _LazyEntryPoint:
                info.cls = info.meta["ep"].load()
            return info.cls
        if ":" in name or "." in name:
            return _import_dotted(name, self.feature)
        raise UnknownProviderError(
            f"Unknown {self.feature} provider '{name}' "
            f"(provide_settings.{self.feature}.provider).{self._suggestion(name)}"
            f" Allowed values: {', '.join(self.names())}; or an entry point "
            f"'{self.feature}.<Name>' in group '{ENTRY_POINT_GROUP}', or a dotted path 'package.module:Class'."
        )

    def _suggestion(self, name: str) -> str:
        """ " Did you mean 'OpenAI'?" for the registered name closest to `name` (case ignored), else ""."""
        import difflib

        by_lower = {known.lower(): known for known in [*self.names(), *self._aliases]}
        close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=0.6)
        return f" Did you mean '{self._aliases.get(by_lower[close[0]], by_lower[close[0]])}'?" if close else ""

    def info(self, name: str) -> ProviderInfo | None:
        return self._lookup(name)


def _source_of(module: pkgutil.ModuleInfo) -> str:
    """The source text of a module found by pkgutil ("" when it has no readable source file)."""
    spec = module.module_finder.find_spec(module.name, None)  # type: ignore[call-arg]
    origin = getattr(spec, "origin", None)
    if not origin or not origin.endswith(".py"):
        return ""
    try:
        with open(origin, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


class _LazyEntryPoint:
    """Marker: the entry point is loaded only when its provider is asked for."""


def _import_dotted(path: str, feature: str) -> type:
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"Cannot import {feature} provider '{path}': {exc}. Use 'package.module:Class' with the package installed."
        ) from exc
