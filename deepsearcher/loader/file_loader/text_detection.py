"""Files read as plain text beyond the loaders' own extensions: source code and config files
by extension, files with no extension (`README`, `copyright`, `Makefile`) by their content,
and any extension the user adds (`--ext`, `load_settings.text_extensions`).

Content detection reads the first 8 KB: no NUL byte and a text encoding charset-normalizer
accepts (UTF-8 first) means text; an image or archive has NUL bytes within its first bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from deepsearcher.loader.file_loader._document import extension
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.file_loader.text_loader import TextLoader
from deepsearcher.types import Document

#: Extensions of plain-text files (code, config, markup without its own loader), read as text.
TEXT_EXTENSIONS = frozenset(
    "py pyi rst cfg ini conf toml yaml yml sh bash log tex c h cc cpp hpp java js ts go rs rb pl php sql "
    "r lua swift kt scala cs el vim diff patch".split()
)
_SNIFF_BYTES = 8192


def normalized_extensions(extensions: Iterable[str]) -> frozenset[str]:
    """`.PY`, `py`, ` .cfg ` → py, cfg."""
    return frozenset(item.strip().lstrip(".").lower() for item in extensions if item.strip().lstrip("."))


def looks_like_text(path: str | os.PathLike[str]) -> bool:
    """Whether the file's first bytes are text (see the module docstring); False when unreadable."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    if not head.strip() or b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
        return True
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:  # a character cut at the 8 KB boundary
            return True
    from charset_normalizer import from_bytes

    best = from_bytes(head).best()
    return best is not None and best.chaos < 0.2


class WithTextFiles(BaseLoader):
    """`base`, plus plain text for the extensions above, the user's, and extension-less text files.

    Extensions `base` reads stay with `base`; everything else this adds goes to TextLoader.
    """

    def __init__(self, base: BaseLoader, extra_extensions: Iterable[str] = ()) -> None:
        self.base = base
        own = set(base.supported_file_types)
        self.text_extensions = (TEXT_EXTENSIONS | normalized_extensions(extra_extensions)) - own
        self.text = TextLoader()

    @property
    def supported_file_types(self) -> list[str]:
        return sorted(set(self.base.supported_file_types) | self.text_extensions)

    def _as_text(self, file_path: str | os.PathLike[str]) -> bool:
        ext = extension(file_path)
        if ext in self.text_extensions:
            return True
        return ext == "" and not Path(file_path).name.startswith(".") and looks_like_text(file_path)

    def can_load(self, file_path: str | os.PathLike[str]) -> bool:
        return self.base.can_load(file_path) or self._as_text(file_path)

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        if self.base.can_load(file_path):
            return self.base.load_file(os.fspath(file_path))
        return self.text.load_file(os.fspath(file_path))
