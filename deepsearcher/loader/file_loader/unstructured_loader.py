"""Many file types through Unstructured: the local `unstructured` package, or its hosted API.

Unstructured cuts a file into typed elements (Title, NarrativeText, ListItem, Table, ...)
with page numbers. Here they become one Document per page and section: a Title element
starts a section, a new page starts a new Document, so chunks never straddle either and
every chunk can cite `page` and `section`. Running headers, footers and page numbers are
dropped (they repeat on every page and only add noise); tables are rendered one row per
line, cells joined by " | ".
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Iterable
from html.parser import HTMLParser
from typing import Any, ClassVar

from deepsearcher.config.optional import is_installed, require
from deepsearcher.config.registry import register_provider
from deepsearcher.loader.file_loader._document import checked_file, make_document
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.types import (
    ConfigurationError,
    Document,
    LoaderError,
    MissingDependencyError,
)
from deepsearcher.types.json import JSONObject

API_KEY_ENV = "UNSTRUCTURED_API_KEY"
API_URL_ENV = "UNSTRUCTURED_API_URL"
DEFAULT_API_URL = "https://api.unstructuredapp.io"
API_PATH = "/general/v0/general"
MODES = ("auto", "local", "api")

_SKIPPED_TYPES = frozenset({"Header", "Footer", "PageBreak", "PageNumber", "Image", "FigureCaption"})
_SECTION_TYPES = frozenset({"Title"})


class _TableRows(HTMLParser):
    """Rows of an HTML table (Unstructured's `text_as_html`) as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_text(html: str) -> str:
    parser = _TableRows()
    parser.feed(html)
    return "\n".join(" | ".join(cells) for cells in parser.rows if any(cells))


def _element_text(element: dict[str, Any]) -> str:
    metadata = element.get("metadata") or {}
    if element.get("type") == "Table" and metadata.get("text_as_html"):
        rendered = table_text(str(metadata["text_as_html"]))
        if rendered.strip():
            return rendered
    return str(element.get("text") or "").strip()


def elements_to_documents(path: str, elements: Iterable[dict[str, Any]], file_type: str) -> list[Document]:
    """One Document per (page, section) run of elements, with page / section / title metadata."""
    documents: list[Document] = []
    title: str | None = None
    section: str | None = None
    page: int | None = None
    parts: list[str] = []
    types: set[str] = set()
    groups: list[tuple[int | None, str | None, list[str], set[str]]] = []

    def flush() -> None:
        if any(part.strip() for part in parts):
            groups.append((page, section, list(parts), set(types)))
        parts.clear()
        types.clear()

    for element in elements:
        kind = str(element.get("type") or "")
        if kind in _SKIPPED_TYPES:
            continue
        text = _element_text(element)
        if not text:
            continue
        element_page = (element.get("metadata") or {}).get("page_number")
        element_page = (
            int(element_page) if isinstance(element_page, (int, float, str)) and str(element_page).isdigit() else None
        )
        if element_page != page and parts:
            flush()
        page = element_page if element_page is not None else page
        if kind in _SECTION_TYPES:
            flush()
            section = text.splitlines()[0][:300]
            title = title or section
        parts.append(text)
        types.add(kind)
    flush()
    for group_page, group_section, group_parts, group_types in groups:
        extra: JSONObject = {"element_types": sorted(group_types)}
        if group_page is not None:
            extra["page"] = group_page
        if group_section:
            extra["section"] = group_section
        documents.append(make_document(path, "\n\n".join(group_parts), file_type, title, **extra))
    return documents


@register_provider("file_loader", extra="unstructured", requires=("unstructured",), env_var=API_KEY_ENV)
class UnstructuredLoader(BaseLoader):
    """PDF, Office, HTML, e-mail, EPUB, images (OCR) ... through Unstructured.

    mode: "local" (the `unstructured` package, extra `unstructured`), "api" (the hosted
    Unstructured API: api_key, else $UNSTRUCTURED_API_KEY; api_url, else
    $UNSTRUCTURED_API_URL, else https://api.unstructuredapp.io; a self-hosted
    unstructured-api server needs no key), or "auto" (default: local when installed,
    else the API when a key or URL is set). strategy: Unstructured's partition strategy
    ("auto", "fast", "hi_res", "ocr_only"). Other keyword options go to partition() /
    the API as form fields.
    """

    supported_file_types: ClassVar[list[str]] = [
        "pdf",
        "docx",
        "doc",
        "pptx",
        "ppt",
        "xlsx",
        "xls",
        "odt",
        "rtf",
        "epub",
        "html",
        "htm",
        "xml",
        "md",
        "rst",
        "org",
        "txt",
        "eml",
        "msg",
        "csv",
        "tsv",
        "png",
        "jpg",
        "jpeg",
        "tiff",
        "bmp",
        "heic",
    ]

    def __init__(
        self,
        mode: str = "auto",
        api_key: str | None = None,
        api_url: str | None = None,
        strategy: str = "auto",
        timeout: float = 300.0,
        max_retries: int = 3,
        retry_base_delay: float = 1.0,
        **options: object,
    ) -> None:
        if mode not in MODES:
            raise ConfigurationError(
                f"Unknown UnstructuredLoader mode '{mode}' (file_loader.config.mode). Allowed values: "
                f"{', '.join(MODES)}."
            )
        self.strategy = strategy
        self.options = options
        self.api_key = api_key or os.environ.get(API_KEY_ENV) or None
        configured_url = api_url or os.environ.get(API_URL_ENV) or None
        if mode == "auto":
            mode = "local" if is_installed("unstructured") else ("api" if self.api_key or configured_url else "local")
        if mode == "local":
            require(
                "unstructured",
                extra="unstructured",
                feature=f"UnstructuredLoader (or set {API_KEY_ENV} to use the hosted Unstructured API instead)",
            )
        self.mode = mode
        url = (configured_url or DEFAULT_API_URL).rstrip("/")
        self.api_url = url if url.endswith(API_PATH) else url + API_PATH
        if mode == "api" and not self.api_key and not configured_url:
            from deepsearcher.types.errors import MissingAPIKeyError

            raise MissingAPIKeyError(
                "UnstructuredLoader",
                API_KEY_ENV,
                message=f"No API key for UnstructuredLoader: set {API_KEY_ENV} or "
                "provide_settings.file_loader.config.api_key "
                f"(a self-hosted unstructured-api server needs only api_url / {API_URL_ENV}).",
            )
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        path, ext = checked_file(file_path, self.supported_file_types)
        elements = self._partition_api(path) if self.mode == "api" else self._partition_local(path)
        documents = elements_to_documents(path, elements, ext)
        if not documents:
            raise LoaderError(path, "Unstructured found no text in the file")
        return documents

    def _partition_local(self, path: str) -> list[JSONObject]:
        partition = require(
            "unstructured.partition.auto",
            extra="unstructured",
            feature="UnstructuredLoader",
        ).partition
        try:
            elements = partition(filename=path, strategy=self.strategy, **self.options)
        except (MissingDependencyError, LoaderError):
            raise
        except ImportError as exc:  # a file type whose optional dependencies are missing
            raise LoaderError(path, f"Unstructured cannot read this type here: {exc}") from exc
        except Exception as exc:
            raise LoaderError(path, f"Unstructured failed: {type(exc).__name__}: {exc}") from exc
        return [element.to_dict() for element in elements]

    def _partition_api(self, path: str) -> list[JSONObject]:
        import httpx

        from deepsearcher.transport.http import HTTPStatusError, call_sync, classify_http, error_detail
        from deepsearcher.transport.retry import GiveUp, RetryPolicy

        with open(path, "rb") as handle:
            content = handle.read()
        name = os.path.basename(path)
        mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
        fields: JSONObject = {
            "strategy": self.strategy,
            **{k: _form_value(v) for k, v in self.options.items()},
        }
        headers = {"accept": "application/json"}
        if self.api_key:
            headers["unstructured-api-key"] = self.api_key

        def attempt() -> list[JSONObject]:
            response = httpx.post(
                self.api_url,
                files={"files": (name, content, mime)},
                data=fields,
                headers=headers,
                timeout=self.timeout,
            )
            if response.status_code >= 400:
                raise HTTPStatusError(response.status_code, error_detail(response), response.headers)
            elements = response.json()
            if not isinstance(elements, list):
                raise ValueError("the API did not answer a list of elements")
            return elements

        policy = RetryPolicy(
            max_retries=self.max_retries,
            timeout=self.timeout,
            base_delay=self.retry_base_delay,
        )
        try:
            return call_sync(attempt, classify_http, policy)
        except GiveUp as exc:
            hint = f". {exc.failure.hint}" if exc.failure.hint else ""
            raise LoaderError(path, f"Unstructured API at {self.api_url}: {exc.reason}{hint}") from None


def _form_value(value: object) -> str | list[str]:
    """Form fields are strings; lists (e.g. languages) are sent as repeated fields."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return str(value)
