"""JSON files holding one record or a list of records (e.g. the 2Wiki corpus: {title, text})."""

from __future__ import annotations

import json
import os
from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._records import record_document, require_documents
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document, LoaderError


@register_provider("file_loader")
class JsonFileLoader(BaseLoader):
    """One Document per record: text from `text_key`, every other field (title included) in metadata."""

    def __init__(self, text_key: str = "text") -> None:
        self.text_key = text_key

    supported_file_types: ClassVar[list[str]] = ["json"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        try:
            data = json.loads(read_text(path))
        except json.JSONDecodeError as exc:
            raise LoaderError(
                path,
                f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            ) from exc
        if isinstance(data, dict):
            records = [data]
        elif isinstance(data, list):
            records = data
        else:
            raise LoaderError(
                path,
                f"expected a JSON object or a list of objects, got a JSON {type(data).__name__}",
            )
        if not records:
            raise LoaderError(path, "empty JSON list: no records")
        documents = []
        for index, record in enumerate(records):
            document = record_document(path, record, self.text_key, "json", index, f"record {index} (0-based)")
            if document is not None:
                documents.append(document)
        return require_documents(path, documents)
