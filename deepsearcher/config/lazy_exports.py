"""Module-level `__getattr__` that exposes a registry's providers as package attributes.

`from deepsearcher.llm import OpenAI` keeps working as in DeepSearcher without the
package's `__init__` listing every provider.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.types.errors import ConfigurationError


def provider_getattr(registry: ProviderRegistry, module_name: str) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        try:
            return registry.get(name)
        except ConfigurationError as exc:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}") from exc

    return __getattr__
