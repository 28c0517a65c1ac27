"""JSON files holding one record or a list of records (e.g. the 2Wiki corpus: {title, text})."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._budget import check_records
from deepsearcher.loader.file_loader._records import record_document, require_documents
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document, LoaderError
from deepsearcher.types.json import JSONValue


@register_provider("file_loader")
class JsonFileLoader(BaseLoader):
    """One Document per record: text from `text_key`, every other field (title included) in metadata.

    Records are decoded one by one, at most `max_records` of them (the per-file budget)."""

    def __init__(self, text_key: str = "text") -> None:
        self.text_key = text_key

    supported_file_types: ClassVar[list[str]] = ["json"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        documents = []
        for index, record in enumerate(iter_json_records(path, read_text(path))):
            check_records(path, index + 1)
            document = record_document(path, record, self.text_key, "json", index, f"record {index} (0-based)")
            if document is not None:
                documents.append(document)
        return require_documents(path, documents)


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def iter_json_records(path: str, text: str) -> Iterator[JSONValue]:
    """The records of a JSON file (one object, or each item of a top-level list), decoded one
    at a time: a list of a million objects is never held whole, and `max_records` stops it early."""
    decoder = json.JSONDecoder()
    position = _WHITESPACE.match(text).end()  # type: ignore[union-attr]  # matches the empty string
    try:
        if not text.startswith("[", position):
            data, end = decoder.raw_decode(text, position)
            if _WHITESPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
                raise json.JSONDecodeError("Extra data", text, end)
            if not isinstance(data, dict):
                raise LoaderError(
                    path, f"expected a JSON object or a list of objects, got a JSON {type(data).__name__}"
                )
            yield data
            return
        position = _WHITESPACE.match(text, position + 1).end()  # type: ignore[union-attr]
        if text.startswith("]", position):
            raise LoaderError(path, "empty JSON list: no records")
        while True:
            record, position = decoder.raw_decode(text, position)
            yield record
            position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]
            if text.startswith("]", position):
                break
            if not text.startswith(",", position):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, position)
            position = _WHITESPACE.match(text, position + 1).end()  # type: ignore[union-attr]
        if _WHITESPACE.match(text, position + 1).end() != len(text):  # type: ignore[union-attr]
            raise json.JSONDecodeError("Extra data", text, position + 1)
    except json.JSONDecodeError as exc:
        raise LoaderError(path, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    except RecursionError:  # the C decoder recurses once per bracket, and stops cleanly at Python's limit
        raise LoaderError(path, "JSON nested too deeply (arrays/objects about a thousand levels deep)") from None
