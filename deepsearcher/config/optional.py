"""Import optional SDKs lazily, turning a missing one into an error naming the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from deepsearcher.types.errors import MissingDependencyError


def require(module: str, extra: str, feature: str = "") -> ModuleType:
    """Import `module` or raise MissingDependencyError telling which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name and not module.startswith(exc.name.split(".")[0]):
            raise  # the module exists but one of *its* imports is broken: show that
        raise MissingDependencyError(module.split(".")[0], extra, feature) from exc


def is_installed(module: str) -> bool:
    """True when `module` can be imported (used by `deepsearcher providers`)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
