"""File loaders on real files made in a temp dir: content, metadata and error messages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import docx
import pytest
from reportlab.pdfgen import canvas

from deepsearcher.loader.file_loader import registry
from deepsearcher.loader.file_loader.csv_loader import CSVLoader
from deepsearcher.loader.file_loader.docx_loader import DocxLoader
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.loader.file_loader.html_loader import HTMLLoader
from deepsearcher.loader.file_loader.json_loader import JsonFileLoader
from deepsearcher.loader.file_loader.jsonl_loader import JsonlLoader
from deepsearcher.loader.file_loader.markdown_loader import MarkdownLoader
from deepsearcher.loader.file_loader.pdf_loader import PDFLoader
from deepsearcher.loader.file_loader.text_loader import TextLoader
from deepsearcher.types import ConfigurationError, LoaderError, content_hash


def make_pdf(path: Path, pages: list[str], title: str | None = None) -> Path:
    pdf = canvas.Canvas(str(path))
    if title:
        pdf.setTitle(title)
    for text in pages:
        pdf.drawString(72, 720, text)
        pdf.showPage()
    pdf.save()
    return path


def make_docx(path: Path, title: str | None = None) -> Path:
    document = docx.Document()
    if title:
        document.core_properties.title = title
    document.add_heading("Coral Reefs", level=1)
    document.add_paragraph("Coral reefs cover less than one percent of the ocean floor.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Reef"
    table.cell(0, 1).text = "Area"
    table.cell(1, 0).text = "Great Barrier Reef"
    table.cell(1, 1).text = "344400 km2"
    document.add_paragraph("They host a quarter of all marine species.")
    document.save(str(path))
    return path


ARTICLE_HTML = """<!DOCTYPE html>
<html><head><title>Solar Power Basics</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li><li>Contact</li></ul></nav>
<article><h1>Solar Power Basics</h1>
<p>Photovoltaic cells convert sunlight directly into electricity using semiconductor materials
such as silicon. When photons strike the cell, they knock electrons loose and a current flows.</p>
<p>A typical residential installation produces between five and ten kilowatts at peak, depending
on the number of panels and their orientation toward the sun.</p>
</article>
<footer><p>Copyright 2024 Example Corp. All rights reserved. Privacy policy.</p></footer>
</body></html>"""

WIKI_RECORDS = [
    {"title": "Ada Lovelace", "text": "Ada Lovelace wrote the first published algorithm.", "id": "w1"},
    {"title": "Charles Babbage", "text": "Charles Babbage designed the Analytical Engine.", "id": "w2"},
]


# --- single-type loaders ----------------------------------------------------------------


def test_text_loader_reads_content_and_sets_metadata(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Mitochondria are the powerhouse of the cell.\n", encoding="utf-8")
    [document] = TextLoader().load_file(str(path))
    assert document.page_content == "Mitochondria are the powerhouse of the cell.\n"
    assert document.metadata["reference"] == str(path)
    assert document.metadata["file_type"] == "txt"
    assert document.metadata["content_hash"] == content_hash(document.page_content)
    assert "title" not in document.metadata


def test_text_loader_strips_utf8_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfCaf\xc3\xa9 au lait")
    [document] = TextLoader().load_file(path)
    assert document.page_content == "Café au lait"


def test_markdown_title_is_first_heading_outside_code_and_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(
        "---\nlayout: post\n---\nIntro line.\n\n```\n# not a heading\n```\n\n## Installing the Tool ##\n\n# Later\n",
        encoding="utf-8",
    )
    [document] = MarkdownLoader().load_file(str(path))
    assert document.metadata["title"] == "Installing the Tool"
    assert "# not a heading" in document.page_content
    assert document.metadata["file_type"] == "md"


def test_markdown_setext_heading_and_markdown_extension(tmp_path: Path) -> None:
    path = tmp_path / "readme.markdown"
    path.write_text("Project Nebula\n==============\n\nA star catalogue.\n", encoding="utf-8")
    [document] = MarkdownLoader().load_file(str(path))
    assert document.title == "Project Nebula"


def test_pdf_one_document_per_page_with_title(tmp_path: Path) -> None:
    path = make_pdf(
        tmp_path / "tides.pdf",
        ["Tidal turbines harvest energy from ocean currents.", "Page two discusses maintenance costs."],
        title="Tidal Energy Report",
    )
    documents = PDFLoader().load_file(str(path))
    assert [d.metadata["page"] for d in documents] == [1, 2]
    assert "Tidal turbines harvest energy" in documents[0].page_content
    assert "maintenance costs" in documents[1].page_content
    assert "maintenance" not in documents[0].page_content
    assert all(d.metadata["title"] == "Tidal Energy Report" for d in documents)
    assert all(d.metadata["reference"] == str(path) and d.metadata["file_type"] == "pdf" for d in documents)
    assert documents[0].content_hash != documents[1].content_hash


def test_pdf_without_title_has_no_title_key(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "plain.pdf", ["Just one page of text."])  # reportlab writes "untitled"
    [document] = PDFLoader().load_file(str(path))
    assert "title" not in document.metadata
    assert document.page_content.strip() == "Just one page of text."


def test_pdf_loader_delegates_markdown_and_text_for_compatibility(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Heading A\nbody a\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("body b\n", encoding="utf-8")
    make_pdf(tmp_path / "c.pdf", ["body c"])
    loader = PDFLoader()
    assert loader.supported_file_types == ["pdf", "md", "txt"]
    documents = loader.load_directory(str(tmp_path))
    assert [d.metadata["file_type"] for d in documents] == ["md", "txt", "pdf"]
    assert documents[0].title == "Heading A"


def test_json_2wiki_format_one_document_per_record(tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(WIKI_RECORDS), encoding="utf-8")
    documents = JsonFileLoader().load_file(str(path))
    assert [d.page_content for d in documents] == [r["text"] for r in WIKI_RECORDS]
    assert [d.metadata["title"] for d in documents] == ["Ada Lovelace", "Charles Babbage"]
    assert [d.metadata["record_index"] for d in documents] == [0, 1]
    assert [d.metadata["id"] for d in documents] == ["w1", "w2"]
    assert all(d.reference == str(path) and "text" not in d.metadata for d in documents)


def test_json_single_object_custom_text_key_and_reserved_field(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"body": "Only record.", "reference": "doi:10/x"}), encoding="utf-8")
    [document] = JsonFileLoader(text_key="body").load_file(str(path))
    assert document.page_content == "Only record."
    assert document.metadata["reference"] == str(path)
    assert document.metadata["record_reference"] == "doi:10/x"


def test_json_record_missing_text_key_names_file_index_and_key(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps([WIKI_RECORDS[0], {"title": "No text here"}]), encoding="utf-8")
    with pytest.raises(LoaderError) as info:
        JsonFileLoader().load_file(str(path))
    message = str(info.value)
    assert str(path) in message and "record 1" in message and "'text'" in message
    assert info.value.source == str(path)


def test_json_blank_record_is_skipped_but_all_blank_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "blanks.json"
    path.write_text(json.dumps([{"text": "  "}, {"text": "kept"}]), encoding="utf-8")
    [document] = JsonFileLoader().load_file(str(path))
    assert document.page_content == "kept" and document.metadata["record_index"] == 1
    path.write_text(json.dumps([{"text": ""}]), encoding="utf-8")
    with pytest.raises(LoaderError, match="no record with text"):
        JsonFileLoader().load_file(str(path))


def test_jsonl_records_and_line_numbered_errors(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in WIKI_RECORDS) + "\n\n", encoding="utf-8")
    documents = JsonlLoader().load_file(str(path))
    assert [d.title for d in documents] == ["Ada Lovelace", "Charles Babbage"]
    assert [d.metadata["record_index"] for d in documents] == [0, 1]
    assert all(d.metadata["file_type"] == "jsonl" for d in documents)

    path.write_text(json.dumps(WIKI_RECORDS[0]) + "\n" + '{"text": "ok"}\n{"text": oops}\n', encoding="utf-8")
    with pytest.raises(LoaderError, match=r"malformed JSON on line 3 column 10"):
        JsonlLoader().load_file(str(path))
    path.write_text(json.dumps(WIKI_RECORDS[0]) + '\n\n{"title": "x"}\n', encoding="utf-8")
    with pytest.raises(LoaderError, match=r"line 3 has no 'text' key"):
        JsonlLoader().load_file(str(path))


def test_html_main_text_without_boilerplate(tmp_path: Path) -> None:
    path = tmp_path / "solar.html"
    path.write_text(ARTICLE_HTML, encoding="utf-8")
    [document] = HTMLLoader().load_file(str(path))
    assert "Photovoltaic cells convert sunlight" in document.page_content
    assert "five and ten kilowatts" in document.page_content
    for boilerplate in ("About us", "Copyright 2024", "Privacy policy"):
        assert boilerplate not in document.page_content
    assert document.title == "Solar Power Basics"
    assert document.metadata["file_type"] == "html"


def test_docx_paragraphs_tables_and_core_title(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "reefs.docx", title="Reef Survey 2024")
    [document] = DocxLoader().load_file(str(path))
    lines = document.page_content.splitlines()
    assert lines == [
        "Coral Reefs",
        "Coral reefs cover less than one percent of the ocean floor.",
        "Reef | Area",
        "Great Barrier Reef | 344400 km2",
        "They host a quarter of all marine species.",
    ]
    assert document.title == "Reef Survey 2024"
    assert document.metadata["file_type"] == "docx"


def test_docx_without_core_title_has_no_title(tmp_path: Path) -> None:
    [document] = DocxLoader().load_file(str(make_docx(tmp_path / "untitled.docx")))
    assert "title" not in document.metadata


def test_csv_rows_as_column_value_lines(tmp_path: Path) -> None:
    path = tmp_path / "planets.csv"
    path.write_text('title,moons,note\nMars,2,"red, dusty"\nVenus,0,\n', encoding="utf-8")
    documents = CSVLoader().load_file(str(path))
    assert [d.page_content for d in documents] == ["title: Mars\nmoons: 2\nnote: red, dusty", "title: Venus\nmoons: 0"]
    assert [d.title for d in documents] == ["Mars", "Venus"]
    assert [d.metadata["record_index"] for d in documents] == [0, 1]
    assert all(d.reference == str(path) for d in documents)


def test_csv_text_column_with_other_columns_as_metadata(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text("title,year,abstract\nDeep Nets,2015,We train very deep networks.\n", encoding="utf-8")
    [document] = CSVLoader(text_column="abstract").load_file(str(path))
    assert document.page_content == "We train very deep networks."
    assert document.metadata["year"] == "2015" and document.title == "Deep Nets"
    assert "abstract" not in document.metadata
    with pytest.raises(LoaderError, match=r"no column 'summary' \(columns: title, year, abstract\)"):
        CSVLoader(text_column="summary").load_file(str(path))


def test_csv_row_with_extra_fields_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n3,4,5\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"row 1 \(0-based\) ending on line 3 has more fields than the header"):
        CSVLoader().load_file(str(path))


# --- bad inputs -------------------------------------------------------------------------


def bad_inputs(root: Path) -> dict[str, tuple[Path, str]]:
    """Each bad file and the reason its error must give."""
    root.mkdir()
    cases = {
        "corrupt_pdf": (root / "corrupt.pdf", b"%PDF-1.4\nthis is not really a pdf\n", "corrupt PDF"),
        "not_pdf": (root / "fake.pdf", b"just words", "corrupt PDF: not a PDF"),
        "binary_txt": (root / "binary.txt", b"ELF\x00\x01\x02\x00data", "binary file, not text"),
        "empty": (root / "empty.txt", b"", "empty file"),
        "whitespace": (root / "blank.md", b" \n\t\n", "empty file (only whitespace)"),
        "undecodable": (
            root / "noise.txt",
            bytes(range(1, 256)) * 4,
            "undecodable bytes: not UTF-8 (byte 0x80 at position 127)",
        ),
        "malformed_json": (
            root / "bad.json",
            b'[\n  {"text": "a"},\n    {text: "b"}\n]',
            "malformed JSON at line 3 column 6",
        ),
        "corrupt_docx": (root / "bad.docx", b"PK\x03\x04garbage", "corrupt DOCX"),
    }
    result = {}
    for name, (path, data, reason) in cases.items():
        path.write_bytes(data)
        result[name] = (path, reason)
    directory = root / "folder.txt"  # a directory with a loadable name cannot be read
    directory.mkdir()
    result["directory"] = (directory, "is a directory, not a file")
    dangling = root / "gone.txt"
    dangling.symlink_to(root / "missing-target.txt")
    result["dangling_symlink"] = (dangling, "dangling symbolic link")
    result["missing"] = (root / "never-created.txt", "file not found")
    return result


BAD_CASES = [
    "corrupt_pdf",
    "not_pdf",
    "binary_txt",
    "empty",
    "whitespace",
    "undecodable",
    "malformed_json",
    "corrupt_docx",
    "directory",
    "dangling_symlink",
    "missing",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_inputs_raise_loader_error_naming_file_and_reason(tmp_path: Path, case: str) -> None:
    path, reason = bad_inputs(tmp_path / "bad")[case]
    with pytest.raises(LoaderError) as info:
        FileLoader().load_file(str(path))
    assert info.value.source == str(path)
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{path}: ")


def test_permission_denied_when_not_root(tmp_path: Path) -> None:
    path = tmp_path / "secret.txt"
    path.write_text("classified", encoding="utf-8")
    path.chmod(0)
    try:
        if os.geteuid() == 0:  # root reads anything: the file loads, which is right for root
            assert TextLoader().load_file(str(path))[0].page_content == "classified"
        else:
            with pytest.raises(LoaderError, match="permission denied"):
                TextLoader().load_file(str(path))
    finally:
        path.chmod(0o600)


def test_directory_load_stops_at_a_bad_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(b"\xff\xfe\x00")  # UTF-16 BOM then an odd byte: undecodable
    with pytest.raises(LoaderError) as info:
        FileLoader().load_directory(str(tmp_path))
    assert info.value.source == str(tmp_path / "b.txt")
    assert "not valid UTF-16" in info.value.reason


# --- FileLoader dispatch ----------------------------------------------------------------


def test_file_loader_is_registered_and_supports_the_union() -> None:
    assert registry.get("FileLoader") is FileLoader
    for name in (
        "TextLoader",
        "MarkdownLoader",
        "PDFLoader",
        "JsonFileLoader",
        "JsonlLoader",
        "HTMLLoader",
        "DocxLoader",
        "CSVLoader",
    ):
        assert registry.get(name).__name__ == name
    assert FileLoader().supported_file_types == sorted(
        ["csv", "docx", "htm", "html", "json", "jsonl", "markdown", "md", "pdf", "txt"]
    )


def test_file_loader_routes_markdown_to_markdown_loader() -> None:
    loader = FileLoader()
    assert isinstance(loader.loader_for("x.md"), MarkdownLoader)
    assert isinstance(loader.loader_for("x.PDF"), PDFLoader)
    assert loader.loader_for("x.xyz") is None


def test_file_loader_unsupported_extension_names_supported_types(tmp_path: Path) -> None:
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG")
    with pytest.raises(LoaderError) as info:
        FileLoader().load_file(str(path))
    assert "unsupported file type '.png'" in info.value.reason
    assert ".pdf" in info.value.reason and ".jsonl" in info.value.reason


def test_file_loader_forwards_options_and_rejects_unknown_ones(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"body": "from jsonl"}\n', encoding="utf-8")
    (tmp_path / "b.json").write_text('[{"body": "from json"}]', encoding="utf-8")
    (tmp_path / "c.csv").write_text("x;body\n1;from csv\n", encoding="utf-8")
    loader = FileLoader(text_key="body", text_column="body", loader_options={"csv": {"delimiter": ";"}})
    documents = loader.load_directory(str(tmp_path))
    assert [d.page_content for d in documents] == ["from jsonl", "from json", "from csv"]
    with pytest.raises(ConfigurationError, match="unknown FileLoader option"):
        FileLoader(text_kee="body")
    with pytest.raises(ConfigurationError, match="unknown loader_options key"):
        FileLoader(loader_options={"pptx": {}})


def test_load_directory_recurses_and_skips_hidden_and_unsupported(tmp_path: Path) -> None:
    (tmp_path / "top.txt").write_text("top level", encoding="utf-8")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "nested.md").write_text("# Nested\ndeep text", encoding="utf-8")
    (tmp_path / "sub" / "data.json").write_text(json.dumps(WIKI_RECORDS), encoding="utf-8")
    (tmp_path / ".hidden.txt").write_text("hidden file", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.txt").write_text("hidden dir", encoding="utf-8")
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\x00")
    make_pdf(tmp_path / "sub" / "report.pdf", ["pdf page one"], title="Report")
    documents = FileLoader().load_directory(str(tmp_path))
    references = [d.reference for d in documents]
    assert references == [
        str(tmp_path / "top.txt"),
        str(tmp_path / "sub" / "data.json"),
        str(tmp_path / "sub" / "data.json"),
        str(tmp_path / "sub" / "report.pdf"),
        str(tmp_path / "sub" / "deeper" / "nested.md"),
    ]
    texts = " ".join(d.page_content for d in documents)
    assert "hidden" not in texts
    assert [d.title for d in documents] == [None, "Ada Lovelace", "Charles Babbage", "Report", "Nested"]
