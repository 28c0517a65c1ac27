"""JSON Lines files: one record per line, same record rules as JsonFileLoader."""

from __future__ import annotations

import io
import json
import os
from typing import ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._budget import check_records
from deepsearcher.loader.file_loader._records import record_document, require_documents
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document, LoaderError
from deepsearcher.utils.bounded_json import InputLimitError, check_depth


@register_provider("file_loader")
class JsonlLoader(BaseLoader):
    """One Document per non-blank line; errors name the 1-based line number."""

    def __init__(self, text_key: str = "text") -> None:
        self.text_key = text_key

    supported_file_types: ClassVar[list[str]] = ["jsonl"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        documents = []
        record_index = 0
        for line_number, line in enumerate(io.StringIO(read_text(path)), start=1):
            if not line.strip():
                continue
            try:
                check_depth(line, f"line {line_number}")
                record = json.loads(line)
            except InputLimitError as exc:
                raise LoaderError(path, str(exc)) from None
            except json.JSONDecodeError as exc:
                raise LoaderError(
                    path,
                    f"malformed JSON on line {line_number} column {exc.colno}: {exc.msg}",
                ) from exc
            check_records(path, record_index + 1)
            document = record_document(
                path,
                record,
                self.text_key,
                "jsonl",
                record_index,
                f"line {line_number}",
            )
            if document is not None:
                documents.append(document)
            record_index += 1
        return require_documents(path, documents)
