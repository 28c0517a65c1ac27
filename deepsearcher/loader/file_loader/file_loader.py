"""The default file loader: picks the loader for each file by its extension."""

from __future__ import annotations

import inspect
import os
from typing import Any, cast

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import extension, unsupported
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.file_loader.csv_loader import CSVLoader
from deepsearcher.loader.file_loader.docx_loader import DocxLoader
from deepsearcher.loader.file_loader.html_loader import HTMLLoader
from deepsearcher.loader.file_loader.json_loader import JsonFileLoader
from deepsearcher.loader.file_loader.jsonl_loader import JsonlLoader
from deepsearcher.loader.file_loader.markdown_loader import MarkdownLoader
from deepsearcher.loader.file_loader.pdf_loader import PDFLoader
from deepsearcher.loader.file_loader.text_loader import TextLoader
from deepsearcher.types import ConfigurationError, Document

# Earlier classes win an extension: .md goes to MarkdownLoader, not to PDFLoader's compatibility path.
LOADER_CLASSES: tuple[type[BaseLoader], ...] = (
    TextLoader,
    MarkdownLoader,
    PDFLoader,
    JsonFileLoader,
    JsonlLoader,
    HTMLLoader,
    DocxLoader,
    CSVLoader,
)


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

    def __init__(self, loader_options: dict[str, dict[str, Any]] | None = None, **options: Any) -> None:
        self._given = (dict(loader_options or {}), dict(options))  # for with_options
        per_loader = dict(loader_options or {})
        self._by_type: dict[str, BaseLoader] = {}
        used: set[str] = set()
        for cls in LOADER_CLASSES:
            accepted = _accepted_options(cls)
            kwargs = {key: value for key, value in options.items() if key in accepted}
            used.update(kwargs)
            for key in [cls.__name__, *cast(Any, cls).supported_file_types]:  # a class attribute on loaders
                kwargs.update(per_loader.pop(key, {}))
            loader = cls(**kwargs)
            for file_type in loader.supported_file_types:
                self._by_type.setdefault(file_type, loader)
        unknown_options = sorted(set(options) - used)
        if unknown_options or per_loader:
            raise ConfigurationError(self._option_error(unknown_options, sorted(per_loader)))

    def _option_error(self, unknown_options: list[str], unknown_keys: list[str]) -> str:
        accepted = sorted(set().union(*(_accepted_options(cls) for cls in LOADER_CLASSES)))
        parts = []
        if unknown_options:
            parts.append(f"unknown FileLoader option(s) {', '.join(unknown_options)}; accepted: {', '.join(accepted)}")
        if unknown_keys:
            keys = sorted(self._by_type) + [cls.__name__ for cls in LOADER_CLASSES]
            parts.append(f"unknown loader_options key(s) {', '.join(unknown_keys)}; use one of: {', '.join(keys)}")
        return " and ".join(parts) + " (provide_settings.file_loader.config)"

    @property
    def supported_file_types(self) -> list[str]:
        return sorted(self._by_type)

    def with_options(self, **options: Any) -> FileLoader:
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
