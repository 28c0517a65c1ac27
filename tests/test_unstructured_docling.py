"""UnstructuredLoader and DoclingLoader: what can run here.

- The hosted Unstructured API path runs for real against a local HTTP server that speaks
  its API (multipart POST /general/v0/general, answering a JSON list of elements).
- The `unstructured` and `docling` packages are optional extras kept out of the dev
  install (unstructured pulls spaCy and downloads a spaCy model at runtime, docling pulls
  a CUDA build of torch and hub models for PDFs), so their one-line missing-extra errors
  are tested. The conversion of Docling's Markdown into page/section Documents is our
  code and is tested with a stand-in for a converted DoclingDocument; when docling is
  installed, a real DOCX conversion runs instead of the missing-extra check.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from email.parser import BytesParser
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from deepsearcher.llm.errors import MissingAPIKeyError
from deepsearcher.loader.file_loader import registry
from deepsearcher.loader.file_loader.docling_loader import docling_documents, first_title, markdown_sections
from deepsearcher.loader.file_loader.unstructured_loader import UnstructuredLoader, elements_to_documents, table_text
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.types import LoaderError, MissingDependencyError

TABLE_HTML = "<table><tr><th>Year</th><th>Revenue</th></tr><tr><td>2023</td><td>9.1 M</td></tr><tr><td>2024</td><td>12.4 M</td></tr></table>"  # noqa: E501 - a literal read better whole

ELEMENTS: list[dict[str, Any]] = [
    {"type": "Header", "text": "ACME Corp — confidential", "metadata": {"page_number": 1}},
    {"type": "Title", "text": "Annual Report 2024", "metadata": {"page_number": 1, "filename": "report.pdf"}},
    {"type": "NarrativeText", "text": "ACME grew strongly in its third year.", "metadata": {"page_number": 1}},
    {"type": "Title", "text": "Revenue", "metadata": {"page_number": 1}},
    {"type": "NarrativeText", "text": "Revenue rose by a third.", "metadata": {"page_number": 1}},
    {"type": "Footer", "text": "Page 1 of 2", "metadata": {"page_number": 1}},
    {"type": "PageBreak", "text": "", "metadata": {"page_number": 1}},
    {
        "type": "Table",
        "text": "Year Revenue 2023 9.1 M 2024 12.4 M",
        "metadata": {"page_number": 2, "text_as_html": TABLE_HTML},
    },
    {"type": "Title", "text": "Outlook", "metadata": {"page_number": 2}},
    {"type": "ListItem", "text": "Open a second plant in Tampere.", "metadata": {"page_number": 2}},
]


class FakeUnstructuredAPI:
    """A real HTTP server speaking the Unstructured partition API."""

    def __init__(self, elements: list[dict[str, Any]] | None = None) -> None:
        self.elements = ELEMENTS if elements is None else elements
        self.requests: list[dict[str, Any]] = []
        self.failures: list[tuple[int, dict[str, str], dict[str, Any]]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                content_type = self.headers.get("Content-Type", "")
                message = BytesParser(policy=default_policy).parsebytes(
                    f"Content-Type: {content_type}\r\n\r\n".encode() + raw
                )
                fields: dict[str, list[str]] = {}
                files: list[dict[str, Any]] = []
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if part.get_filename():
                        files.append(
                            {
                                "field": name,
                                "filename": part.get_filename(),
                                "type": part.get_content_type(),
                                "data": part.get_payload(decode=True),
                            }
                        )
                    else:
                        fields.setdefault(name, []).append(part.get_content().strip())
                headers = {k.lower(): v for k, v in self.headers.items()}
                api.requests.append(
                    {"path": self.path, "headers": headers, "fields": fields, "files": files, "at": time.monotonic()}
                )
                if api.failures:
                    status, extra, payload = api.failures.pop(0)
                elif headers.get("unstructured-api-key", "") == "wrong":
                    status, extra, payload = 401, {}, {"detail": "API key is invalid"}
                else:
                    status, extra, payload = 200, {}, api.elements
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api():
    server = FakeUnstructuredAPI()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv("UNSTRUCTURED_API_KEY", raising=False)
    monkeypatch.delenv("UNSTRUCTURED_API_URL", raising=False)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    path = tmp_path / "report.pdf"
    path.write_bytes(b"%PDF-1.4 stand-in bytes; the fake API does not read them")
    return path


def hide_module(monkeypatch, name: str) -> None:
    """Make `import name` fail as it does when the package is not installed."""
    for module in list(sys.modules):
        if module == name or module.startswith(name + "."):
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, name, None)


# ---------------------------------------------------------------------- Unstructured: hosted API


def test_hosted_api_request_shape(api, report):
    loader = UnstructuredLoader(
        mode="api", api_key="uk-123", api_url=api.url, strategy="hi_res", languages=["eng", "deu"]
    )
    loader.load_file(str(report))
    [request] = api.requests
    assert request["path"] == "/general/v0/general"
    assert request["headers"]["unstructured-api-key"] == "uk-123"
    assert request["headers"]["accept"] == "application/json"
    assert request["fields"]["strategy"] == ["hi_res"]
    assert request["fields"]["languages"] == ["eng", "deu"]  # a list goes as repeated fields
    [upload] = request["files"]
    assert (upload["field"], upload["filename"], upload["type"]) == ("files", "report.pdf", "application/pdf")
    assert upload["data"] == report.read_bytes()


def test_elements_become_page_and_section_documents(api, report):
    documents = UnstructuredLoader(mode="api", api_key="k", api_url=api.url).load_file(str(report))
    summary = [(d.metadata.get("page"), d.metadata.get("section"), d.page_content) for d in documents]
    assert summary == [
        (1, "Annual Report 2024", "Annual Report 2024\n\nACME grew strongly in its third year."),
        (1, "Revenue", "Revenue\n\nRevenue rose by a third."),
        (2, "Revenue", "Year | Revenue\n2023 | 9.1 M\n2024 | 12.4 M"),  # the section continues on page 2
        (2, "Outlook", "Outlook\n\nOpen a second plant in Tampere."),
    ]
    assert all(d.metadata["title"] == "Annual Report 2024" for d in documents)
    assert all(d.reference == str(report) and d.metadata["file_type"] == "pdf" for d in documents)
    text = "\n".join(d.page_content for d in documents)
    assert "confidential" not in text and "Page 1 of 2" not in text  # running header and footer dropped
    assert documents[2].metadata["element_types"] == ["Table"]


def test_env_vars_select_the_api_when_the_package_is_missing(api, report, monkeypatch):
    hide_module(monkeypatch, "unstructured")
    monkeypatch.setenv("UNSTRUCTURED_API_KEY", "from-env")
    monkeypatch.setenv("UNSTRUCTURED_API_URL", api.url + "/general/v0/general")  # the full endpoint works too
    loader = UnstructuredLoader()
    assert loader.mode == "api" and loader.api_url == api.url + "/general/v0/general"
    assert len(loader.load_file(str(report))) == 4
    assert api.requests[0]["headers"]["unstructured-api-key"] == "from-env"
    assert api.requests[0]["path"] == "/general/v0/general"


def test_a_self_hosted_server_needs_no_key(api, report):
    loader = UnstructuredLoader(mode="api", api_url=api.url)
    assert len(loader.load_file(str(report))) == 4
    assert "unstructured-api-key" not in api.requests[0]["headers"]


def test_rate_limit_and_server_errors_are_retried(api, report):
    api.failures = [(429, {"Retry-After": "0.4"}, {"detail": "slow down"}), (502, {}, {"detail": "bad gateway"})]
    loader = UnstructuredLoader(mode="api", api_key="k", api_url=api.url, retry_base_delay=0.01)
    assert len(loader.load_file(str(report))) == 4
    assert len(api.requests) == 3
    assert api.requests[1]["at"] - api.requests[0]["at"] >= 0.38  # Retry-After honoured


def test_a_rejected_key_is_a_one_line_loader_error(api, report):
    loader = UnstructuredLoader(mode="api", api_key="wrong", api_url=api.url)
    with pytest.raises(LoaderError) as excinfo:
        loader.load_file(str(report))
    message = str(excinfo.value)
    assert "\n" not in message and message.startswith(str(report))
    assert "401 Unauthorized: API key is invalid" in message and "Check the API key" in message
    assert len(api.requests) == 1  # not retried


def test_no_elements_and_bad_files_are_loader_errors(report, tmp_path):
    server = FakeUnstructuredAPI(elements=[{"type": "PageBreak", "text": "", "metadata": {}}])
    try:
        loader = UnstructuredLoader(mode="api", api_key="k", api_url=server.url)
        with pytest.raises(LoaderError, match="no text"):
            loader.load_file(str(report))
        with pytest.raises(LoaderError, match="no such file"):
            loader.load_file(str(tmp_path / "absent.pdf"))
        (tmp_path / "x.zzz").write_text("?")
        with pytest.raises(LoaderError, match="unsupported file type '.zzz'"):
            loader.load_file(str(tmp_path / "x.zzz"))
    finally:
        server.close()


def test_the_pipeline_loads_through_the_hosted_api(api, report, embedding):
    from deepsearcher.vector_db.qdrant import Qdrant

    store = Qdrant(path=":memory:")
    loader = UnstructuredLoader(mode="api", api_key="k", api_url=api.url)
    summary = IngestionPipeline(embedding, store).run(iter_file_sources([report], loader), collection_name="reports")
    assert summary.ok and summary.chunks_inserted == 4
    [hit] = store.search_data("reports", embedding.embed_query("revenue in 2024"), top_k=1, query_text="revenue 2024")
    assert hit.text.startswith("Year | Revenue") and hit.metadata["page"] == 2 and hit.metadata["section"] == "Revenue"
    store.close()


# ---------------------------------------------------------------------- Unstructured: configuration


def test_without_the_package_or_a_key_the_error_names_both(monkeypatch):
    hide_module(monkeypatch, "unstructured")
    with pytest.raises(MissingDependencyError) as excinfo:
        UnstructuredLoader()
    message = str(excinfo.value)
    assert "\n" not in message
    assert "pip install 'deepsearcher[unstructured]'" in message and "UNSTRUCTURED_API_KEY" in message


def test_local_mode_without_the_package_is_the_missing_extra(monkeypatch):
    hide_module(monkeypatch, "unstructured")
    with pytest.raises(MissingDependencyError, match=r"deepsearcher\[unstructured\]"):
        UnstructuredLoader(mode="local", api_key="k")


def test_api_mode_without_key_or_url_is_one_line():
    with pytest.raises(MissingAPIKeyError) as excinfo:
        UnstructuredLoader(mode="api")
    message = str(excinfo.value)
    assert "\n" not in message and message.startswith("No API key for UnstructuredLoader: set UNSTRUCTURED_API_KEY")


def test_unknown_mode_is_a_configuration_error():
    with pytest.raises(ValueError, match="auto, local, api"):
        UnstructuredLoader(mode="cloud")


def test_registered_with_extras():
    assert registry.get("UnstructuredLoader") is UnstructuredLoader
    info = registry.info("UnstructuredLoader")
    assert (info.extra, info.requires, info.env_var) == ("unstructured", ("unstructured",), "UNSTRUCTURED_API_KEY")
    docling = registry.info("DoclingLoader")
    assert (docling.extra, docling.requires) == ("docling", ("docling",))


def test_elements_without_pages_or_titles():
    documents = elements_to_documents(
        "notes.txt",
        [{"type": "NarrativeText", "text": "Just text."}, {"type": "UncategorizedText", "text": "More."}],
        "txt",
    )
    [document] = documents
    assert document.page_content == "Just text.\n\nMore."
    assert "page" not in document.metadata and "section" not in document.metadata and "title" not in document.metadata


def test_table_html_rendering():
    assert table_text(TABLE_HTML) == "Year | Revenue\n2023 | 9.1 M\n2024 | 12.4 M"
    assert table_text("<table><tr><td> a  b </td><td></td></tr></table>") == "a b | "


# ---------------------------------------------------------------------- Docling


def test_docling_missing_extra_is_one_line(monkeypatch):
    hide_module(monkeypatch, "docling")
    with pytest.raises(MissingDependencyError) as excinfo:
        registry.get("DoclingLoader")()
    message = str(excinfo.value)
    assert "\n" not in message and "pip install 'deepsearcher[docling]'" in message and "'docling'" in message


def test_markdown_sections():
    markdown = "Preface line.\n\n# Report\n\n## Revenue\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n# not a heading\n```\n\n## Costs\n\nCosts fell."  # noqa: E501 - a literal read better whole
    assert markdown_sections(markdown, carried="Earlier") == [
        ("Earlier", "Preface line."),
        ("Revenue", "# Report\n\n## Revenue\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n# not a heading\n```"),
        ("Costs", "## Costs\n\nCosts fell."),
    ]
    assert first_title("## Intro\n# Main\n") == "Main"
    assert first_title("no headings") is None


class StandInDoclingDocument:
    """Stands in for a converted docling DoclingDocument (docling is not installed in CI):
    `pages` and `export_to_markdown(page_no=...)` are the two things our loader uses."""

    def __init__(self, pages: dict[int, str]) -> None:
        self._markdown = pages
        self.pages = {number: object() for number in pages}
        self.calls: list[dict[str, Any]] = []

    def export_to_markdown(self, page_no: int | None = None, **kwargs: Any) -> str:
        self.calls.append({"page_no": page_no, **kwargs})
        return self._markdown[page_no] if page_no else "\n\n".join(self._markdown.values())


def test_docling_pages_become_page_and_section_documents():
    document = StandInDoclingDocument(
        {
            1: "# Annual Report\n\n## Revenue\n\nRevenue rose.",
            2: "| Year | Revenue |\n|---|---|\n| 2024 | 12 M |\n\n## Outlook\n\nA new plant.",
        }
    )
    documents = docling_documents("r.pdf", document, "pdf")
    summary = [(d.metadata["page"], d.metadata.get("section"), d.page_content) for d in documents]
    assert summary == [
        (1, "Revenue", "# Annual Report\n\n## Revenue\n\nRevenue rose."),
        (2, "Revenue", "| Year | Revenue |\n|---|---|\n| 2024 | 12 M |"),  # a table keeps its Markdown
        (2, "Outlook", "## Outlook\n\nA new plant."),
    ]
    assert {d.metadata["title"] for d in documents} == {"Annual Report"}
    assert all(d.metadata["page_count"] == 2 and d.metadata["file_type"] == "pdf" for d in documents)
    assert [c["page_no"] for c in document.calls] == [1, 2]
    assert all(c.get("escape_underscores") is False for c in document.calls)


def test_docling_real_docx_or_missing_extra(tmp_path, monkeypatch):
    """With docling installed: a real DOCX conversion keeps the table as Markdown. Without it
    (CI): the loader's construction is the one-line missing-extra error."""
    from deepsearcher.config.optional import is_installed

    if not is_installed("docling"):
        with pytest.raises(MissingDependencyError, match=r"deepsearcher\[docling\]"):
            registry.get("DoclingLoader")()
        return
    import docx

    word = docx.Document()
    word.add_heading("Quarterly Figures", 1)
    table = word.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Quarter", (0, 1): "Sales", (1, 0): "Q1", (1, 1): "40"}.items():
        table.cell(row, col).text = text
    word.save(str(tmp_path / "q.docx"))
    [document] = registry.get("DoclingLoader")().load_file(str(tmp_path / "q.docx"))
    assert document.metadata["section"] == "Quarterly Figures"
    assert "| Quarter" in document.page_content and "| Q1" in document.page_content
