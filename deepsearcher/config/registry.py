"""Provider registries: resolve a provider name from config.yaml to a class.

Each feature package (llm, embedding, vector_db, ...) owns one registry. A name is
looked up, in order, among: classes registered with `@register_provider` (a user's, once its
module is imported), the built-in table (`builtin_providers.py`: name -> "module:Class", only
that module is imported), Python entry points in the group `deepsearcher.providers` named
`<feature>.<Name>` (third-party plugins), every module of the feature's package, and finally a
dotted path `package.module:Class`. No source text is read.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypedDict, TypeVar

from deepsearcher.config.builtin_providers import BUILTIN_PROVIDERS
from deepsearcher.types.errors import ConfigurationError

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "deepsearcher.providers"
T = TypeVar("T", bound=type)


class Registration(TypedDict):
    """What `@register_provider` records beside the class (shown by `deepsearcher providers`)."""

    extra: str | None
    requires: tuple[str, ...]
    env_var: str | None
    aliases: tuple[str, ...]


#: Every class registered with @register_provider, by feature (kept for the process lifetime).
_REGISTERED: dict[str, list[tuple[str, type, Registration]]] = {}


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
    #: A third-party provider's entry point, loaded when the provider is first asked for.
    entry_point: EntryPoint | None = None


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
        info: Registration = {
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
                self._add_lazy(name, ep)

    def names(self) -> list[str]:
        self._discover()
        self._absorb_registered()
        return sorted(self._providers)

    def infos(self) -> list[ProviderInfo]:
        self._discover()
        self._absorb_registered()
        return [self._providers[name] for name in sorted(self._providers)]

    def _known(self, name: str) -> ProviderInfo | None:
        return self._providers.get(self._aliases.get(name, name))

    def _lookup(self, name: str) -> ProviderInfo | None:
        self._absorb_registered()  # classes registered after discovery (user code) count too
        info = self._known(name)
        if info is None and not self._discovered:
            with self._lock:
                self._import_builtin(name)
                if self._known(name) is None:
                    self._add_entry_point(name)
            info = self._known(name)
        if info is None and ":" not in name:  # no row, no entry point: every module (the error lists them)
            self._discover()
            self._absorb_registered()
            info = self._known(name)
        return info

    def _import_builtin(self, name: str) -> None:
        """Import the one module the built-in table names for `name` (its decorator registers it)."""
        path = BUILTIN_PROVIDERS.get(self.feature, {}).get(name)
        if path is not None:
            importlib.import_module(path.partition(":")[0])
            self._absorb_registered()

    def _add_entry_point(self, name: str) -> None:
        """A third-party provider: the entry point `<feature>.<name>`, loaded when first asked for."""
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=f"{self.feature}.{name}"):
            self._add_lazy(name, ep)
            return

    def _add_lazy(self, name: str, ep: EntryPoint) -> None:
        self._providers[name] = ProviderInfo(
            name=name, cls=_LazyEntryPoint, source=f"entry point {ep.value}", entry_point=ep
        )

    def get(self, name: str) -> type:
        """Return the provider class for `name`, or raise naming the allowed values."""
        info = self._lookup(name)
        if info is not None:
            if info.cls is _LazyEntryPoint and info.entry_point is not None:
                info.cls = info.entry_point.load()
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
