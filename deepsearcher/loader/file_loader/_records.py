"""Turning structured records (JSON objects, JSONL lines, CSV rows) into Documents.

JSON, JSONL and CSV share the same rules so a corpus behaves the same in any format:
one Document per record, the text from `text_key`, every other field in metadata.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from deepsearcher.loader.file_loader._document import make_document
from deepsearcher.types import Document, LoaderError
from deepsearcher.types.json import JSONObject, JSONValue

logger = logging.getLogger(__name__)

# Keys the loader sets itself; a record field with one of these names is kept as "record_<name>".
RESERVED_KEYS = frozenset({"reference", "file_type", "record_index", "content_hash"})


class MissingTextKeyError(LoaderError):
    """A record has no field named `text_key`: most often a JSON file that is data or
    configuration, not a corpus. Inside a folder such a file is skipped, not failed."""


def record_text(path: str, record: Mapping[str, JSONValue], text_key: str, where: str) -> str:
    """The record's text; a missing key or a non-string value raises LoaderError."""
    if text_key not in record:
        keys = ", ".join(map(str, record)) or "none"
        if len(keys) > 200:
            keys = keys[:200] + "…"
        raise MissingTextKeyError(
            path,
            f"{where} has no '{text_key}' key (its keys: {keys}); if it is a corpus, load it with "
            "--text-key FIELD (or provide_settings.file_loader.config.text_key) naming the field that holds the text",
        )
    value = record[text_key]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        value = "\n".join(value)  # sentence lists, as in HotpotQA-style corpora
    if not isinstance(value, str):
        raise LoaderError(path, f"{where}: '{text_key}' is {type(value).__name__}, expected a string")
    return value


def field_metadata(record: Mapping[str, JSONValue], skip: str | None = None) -> JSONObject:
    """The record's fields as metadata, renaming those that clash with loader-set keys."""
    metadata: JSONObject = {}
    for key, value in record.items():
        if key == skip:
            continue
        name = f"record_{key}" if key in RESERVED_KEYS else str(key)
        metadata[name] = value
    return metadata


def title_of(record: Mapping[str, JSONValue]) -> str | None:
    title = record.get("title")
    if title is None:
        return None
    return str(title).strip() or None


def build_document(
    path: str,
    text: str,
    record: Mapping[str, JSONValue],
    file_type: str,
    record_index: int,
    where: str,
    skip: str | None = None,
) -> Document | None:
    """The record's Document, or None (logged) when its text is blank: nothing to index."""
    if not text.strip():
        logger.warning("%s: %s has no text; skipped", path, where)
        return None
    metadata = field_metadata(record, skip)
    metadata.pop("title", None)
    metadata["record_index"] = record_index
    return make_document(path, text, file_type, title_of(record), **metadata)


def record_document(
    path: str, record: object, text_key: str, file_type: str, record_index: int, where: str
) -> Document | None:
    """The Document of one JSON-like record (an object with a `text_key` field)."""
    if not isinstance(record, Mapping):
        raise LoaderError(path, f"{where} is a JSON {type(record).__name__}, expected an object")
    text = record_text(path, record, text_key, where)
    return build_document(path, text, record, file_type, record_index, where, skip=text_key)


def require_documents(path: str, documents: list[Document], what: str = "record") -> list[Document]:
    """Raise when a file yielded no text at all: silently indexing nothing hides a problem."""
    if not documents:
        raise LoaderError(path, f"no {what} with text")
    return documents
