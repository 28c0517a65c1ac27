"""CSV files: one Document per row."""

from __future__ import annotations

import csv
import io
import os
from typing import Any, ClassVar

from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._budget import check_records
from deepsearcher.loader.file_loader._records import (
    build_document,
    record_text,
    require_documents,
)
from deepsearcher.loader.file_loader._text import read_text
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import Document, LoaderError


@register_provider("file_loader")
class CSVLoader(BaseLoader):
    """Rows as "column: value" lines, or, with `text_column`, that column as text and the rest as metadata.

    A `title` column becomes the Document title either way.
    """

    def __init__(self, text_column: str | None = None, delimiter: str = ",") -> None:
        self.text_column = text_column
        self.delimiter = delimiter

    supported_file_types: ClassVar[list[str]] = ["csv"]

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path = os.fspath(file_path)
        reader = csv.DictReader(io.StringIO(read_text(path), newline=""), delimiter=self.delimiter)
        try:
            columns = reader.fieldnames or []
            if self.text_column is not None and self.text_column not in columns:
                raise LoaderError(
                    path,
                    f"no column '{self.text_column}' (columns: {', '.join(columns)})",
                )
            documents = []
            for index, row in enumerate(reader):
                check_records(path, index + 1)
                document = self._row_document(
                    path,
                    row,
                    index,
                    f"row {index} (0-based) ending on line {reader.line_num}",
                )
                if document is not None:
                    documents.append(document)
        except csv.Error as exc:
            raise LoaderError(path, f"malformed CSV at line {reader.line_num}: {exc}") from exc
        return require_documents(path, documents, "row")

    def _row_document(self, path: str, row: dict[Any, Any], index: int, where: str) -> Document | None:
        if None in row:
            raise LoaderError(path, f"{where} has more fields than the header")
        record = {key: value or "" for key, value in row.items()}
        if self.text_column is not None:
            text = record_text(path, record, self.text_column, where)
            return build_document(path, text, record, "csv", index, where, skip=self.text_column)
        text = "\n".join(f"{key}: {value}" for key, value in record.items() if value.strip())
        return build_document(path, text, {"title": record.get("title")}, "csv", index, where)
