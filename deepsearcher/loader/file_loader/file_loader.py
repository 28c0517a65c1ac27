"""The default file loader: picks the loader for each file by its extension."""

from __future__ import annotations

import inspect
import os
from typing import Any, cast

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import extension, unsupported
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import ConfigurationError, Document


def dispatch_classes() -> list[type[BaseLoader]]:
    """The loaders FileLoader dispatches to: every registered `file_loader` class that needs no
    extra (ours, and a user's registered the same way), so adding a loader is its one file.
    Extras (docling, unstructured) are chosen by name in the config instead."""
    from deepsearcher.loader.file_loader import registry

    classes: list[type[BaseLoader]] = []
    for info in registry.infos():
        cls = info.cls
        if info.extra or not isinstance(cls, type) or not issubclass(cls, BaseLoader) or cls is FileLoader:
            continue
        if isinstance(getattr(cls, "supported_file_types", None), list):  # declared on the class
            classes.append(cls)
    return classes


def _owner_rank(cls: type[BaseLoader], file_type: str) -> int:
    """Where `cls` lists `file_type`: its first types are its own, later ones fallbacks (PDFLoader
    also reads .md and .txt; MarkdownLoader and TextLoader list them first, so they win)."""
    return cast(list[str], cls.supported_file_types).index(file_type)


def _accepted_options(cls: type[BaseLoader]) -> set[str]:
    """Named constructor parameters of a loader class (none for a loader without options)."""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name for p in parameters if p.kind in named and p.name != "self"}


@register_provider("file_loader")
class FileLoader(BaseLoader):
    """Dispatches each file to the loader for its extension.

    Keyword options (e.g. `text_key="body"`, `text_column="abstract"`) go to every loader
    that accepts them; `loader_options` targets one loader, keyed by extension or class
    name: `{"csv": {"delimiter": ";"}}`. An option no loader accepts is a configuration error.
    """

    def __init__(self, loader_options: dict[str, dict[str, Any]] | None = None, **options: object) -> None:
        self._given = (dict(loader_options or {}), dict(options))  # for with_options
        per_loader = dict(loader_options or {})
        self._by_type: dict[str, BaseLoader] = {}
        used: set[str] = set()
        self._classes = dispatch_classes()
        owners: dict[str, tuple[int, BaseLoader]] = {}
        for cls in self._classes:
            accepted = _accepted_options(cls)
            kwargs = {key: value for key, value in options.items() if key in accepted}
            used.update(kwargs)
            for key in [cls.__name__, *cast(Any, cls).supported_file_types]:  # a class attribute on loaders
                kwargs.update(per_loader.pop(key, {}))
            loader = cls(**kwargs)
            for file_type in loader.supported_file_types:
                rank = _owner_rank(cls, file_type)
                if file_type not in owners or rank < owners[file_type][0]:  # ties: the first registered
                    owners[file_type] = (rank, loader)
        self._by_type = {file_type: loader for file_type, (_, loader) in sorted(owners.items())}
        unknown_options = sorted(set(options) - used)
        if unknown_options or per_loader:
            raise ConfigurationError(self._option_error(unknown_options, sorted(per_loader)))

    def _option_error(self, unknown_options: list[str], unknown_keys: list[str]) -> str:
        accepted = sorted(set().union(*(_accepted_options(cls) for cls in self._classes)))
        parts = []
        if unknown_options:
            parts.append(f"unknown FileLoader option(s) {', '.join(unknown_options)}; accepted: {', '.join(accepted)}")
        if unknown_keys:
            keys = sorted(self._by_type) + [cls.__name__ for cls in self._classes]
            parts.append(f"unknown loader_options key(s) {', '.join(unknown_keys)}; use one of: {', '.join(keys)}")
        return " and ".join(parts) + " (provide_settings.file_loader.config)"

    @property
    def supported_file_types(self) -> list[str]:
        return sorted(self._by_type)

    def with_options(self, **options: object) -> FileLoader:
        """A FileLoader like this one with `options` set too (`text_key="body"` for one load)."""
        loader_options, given = self._given
        return FileLoader(loader_options, **{**given, **options})

    def loader_for(self, file_path: str | os.PathLike[str]) -> BaseLoader | None:
        """The loader that reads this file, or None for an unsupported extension."""
        return self._by_type.get(extension(file_path))

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        loader = self.loader_for(path)
        if loader is None:
            raise unsupported(path, self.supported_file_types)
        return loader.load_file(path)
