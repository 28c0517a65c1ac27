"""Building Documents with the metadata every loader must set."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from deepsearcher.loader.file_loader._text import detected_encoding
from deepsearcher.types import Document, LoaderError
from deepsearcher.types.json import JSONObject, JSONValue


def extension(file_path: str | os.PathLike[str]) -> str:
    """Lower-case extension without the dot ('' when there is none)."""
    return Path(file_path).suffix.lower().lstrip(".")


def make_document(path: str, text: str, file_type: str, title: str | None = None, **extra: JSONValue) -> Document:
    """A Document whose metadata carries reference, file_type and (when known) title.

    `extra` comes first so the loader's own keys always win; content_hash is set by Document.
    A text file's detected encoding (see `_text.decode_text`) is recorded as `encoding`.
    """
    metadata: JSONObject = dict(extra)
    encoding = detected_encoding(path)
    if encoding:
        metadata["encoding"] = encoding
    metadata["reference"] = path
    metadata["file_type"] = file_type
    if title:
        metadata["title"] = title
    return Document(page_content=text, metadata=metadata)


def unsupported(path: str, supported: Iterable[str]) -> LoaderError:
    """The error for a file whose extension no loader here reads."""
    ext = extension(path)
    what = f"unsupported file type '.{ext}'" if ext else "no file extension"
    kinds = ", ".join(f".{kind}" for kind in sorted(set(supported)))
    return LoaderError(path, f"{what}; supported types: {kinds}")


def checked_file(file_path: str | os.PathLike[str], supported: Iterable[str]) -> tuple[str, str]:
    """(path, extension) of a file a loader was asked to read; LoaderError when the
    extension is not in `supported` or the file does not exist."""
    path = os.fspath(file_path)
    ext = extension(path)
    if ext not in supported:
        raise unsupported(path, supported)
    if not os.path.isfile(path):
        raise LoaderError(path, "no such file")
    return path, ext
