"""Structure-aware chunks: a Markdown chunk knows its heading path, which is indexed with it,
and Sphinx's permalink signs do not reach the index."""

from __future__ import annotations

from pathlib import Path

from deepsearcher.loader.file_loader.html_loader import HTMLLoader
from deepsearcher.loader.file_loader.markdown_loader import MarkdownLoader
from deepsearcher.loader.splitter import split_docs_to_chunks

GUIDE = """# Guide

Intro text about the guide.

## Install

### On Linux

Run the package manager with the name of the package. {filler}

```
# not a heading: a shell comment in a fence
```

## Usage

Call the function with two numbers. {filler}
"""


def test_markdown_chunks_carry_and_index_their_heading_path(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(GUIDE.format(filler="More words follow here to fill the chunk. " * 6), encoding="utf-8")
    [document] = MarkdownLoader().load_file(str(path))
    chunks = split_docs_to_chunks([document], chunk_size=300, chunk_overlap=0)
    sections = {chunk.metadata.get("section") for chunk in chunks}
    assert {"Guide", "Guide > Install > On Linux", "Guide > Usage"} <= sections
    assert not any("shell comment" in (section or "") for section in sections)
    usage = next(chunk for chunk in chunks if chunk.text.startswith("Call the function"))
    assert usage.index_text.startswith("Guide > Usage\nCall the function")  # title "Guide" said once
    assert usage.text.startswith("Call the function")  # what a citation quotes stays the chunk itself


def test_a_loader_section_is_kept_and_plain_text_gets_none() -> None:
    from deepsearcher.types import Document

    [own] = split_docs_to_chunks([Document("# A\n\ntext", {"reference": "r", "file_type": "md", "section": "Kept"})])
    [plain] = split_docs_to_chunks([Document("# A\n\ntext", {"reference": "r", "file_type": "txt"})])
    assert own.metadata["section"] == "Kept" and "section" not in plain.metadata
    crawled = {"reference": "http://127.0.0.1/a.html", "content_type": "text/html"}  # the crawler keeps Markdown
    [page] = split_docs_to_chunks([Document("# A\n\n## B\n\ntext", crawled)])
    assert page.metadata["section"] == "A"


SPHINX_PAGE = (
    '<html><head><title>math</title></head><body><div class="body" role="main"><section id="m">'
    '<h1>math functions<a class="headerlink" href="#m" title="Link to this heading">¶</a></h1>'
    + "".join(
        f'<section id="t{n}"><h2>Topic {n}<a class="headerlink" href="#t{n}">¶</a></h2><p>Paragraph {n} explains the '
        "topic well, with enough words to count as the main text of a documentation page.</p></section>"
        for n in range(3)
    )
    + "</section></div></body></html>"
)


def test_sphinx_permalink_signs_are_removed_from_crawled_pages_and_files(tmp_path: Path) -> None:
    """trafilatura's Markdown (what the crawler keeps, headings included) ends each heading with "¶"."""
    from deepsearcher.loader.web_crawler._extract import extract_html

    page = extract_html(SPHINX_PAGE.encode(), "http://127.0.0.1/math.html", want_links=False)
    assert "## Topic 1" in page.text and "¶" not in page.text
    path = tmp_path / "math.html"
    path.write_text(SPHINX_PAGE, "utf-8")
    [document] = HTMLLoader().load_file(str(path))
    assert "Topic 1" in document.page_content and "¶" not in document.page_content


def _section_of(chunks: list, words: str) -> str | None:
    return next(chunk.metadata.get("section") for chunk in chunks if words in chunk.text)


def test_html_chunks_carry_their_h1_to_h6_path(tmp_path: Path) -> None:
    path = tmp_path / "math.html"
    page = SPHINX_PAGE.replace("<h2>Topic 2", "<h3>Topic 2").replace("</h2><p>Paragraph 2", "</h3><p>Paragraph 2")
    path.write_text(page, encoding="utf-8")
    [document] = HTMLLoader().load_file(str(path))
    chunks = split_docs_to_chunks([document], chunk_size=120, chunk_overlap=0, window_parts=True)
    assert _section_of(chunks, "Paragraph 0") == "math functions > Topic 0"
    assert _section_of(chunks, "Paragraph 2") == "math functions > Topic 1 > Topic 2"  # h3 under the h2 before it
    assert all("section_offsets" not in chunk.metadata for chunk in chunks)  # the loader's list stays out of rows
    paragraph = next(chunk for chunk in chunks if "Paragraph 1" in chunk.text)
    assert paragraph.index_text.startswith("math > math functions > Topic 1\n")  # title, then the path


def test_docx_chunks_carry_their_heading_style_path(tmp_path: Path) -> None:
    import docx

    from deepsearcher.loader.file_loader.docx_loader import DocxLoader

    word = docx.Document()
    word.add_heading("Operations manual", level=1)
    word.add_paragraph("General rules apply to every site. " * 4)
    word.add_heading("Cooling", level=2)
    word.add_paragraph("The pump runs at night only. " * 4)
    word.add_heading("Safety", level=1)
    word.add_paragraph("Wear gloves near the acid tank. " * 4)
    word.save(str(tmp_path / "manual.docx"))
    [document] = DocxLoader().load_file(str(tmp_path / "manual.docx"))
    chunks = split_docs_to_chunks([document], chunk_size=150, chunk_overlap=0)
    assert _section_of(chunks, "pump runs") == "Operations manual > Cooling"
    assert _section_of(chunks, "Wear gloves") == "Safety"  # a level-1 heading closes the level-2 one
    assert _section_of(chunks, "General rules") == "Operations manual"


def test_pdf_running_headers_footers_removed_and_outline_gives_sections(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    from deepsearcher.loader.file_loader.pdf_loader import PDFLoader

    path = tmp_path / "handbook.pdf"
    pdf = canvas.Canvas(str(path))
    bodies = [
        ("Introduction", 0, "Welcome to the field handbook for new staff."),
        ("Tides", 0, "High tide arrives twice a day at the harbour."),
        ("Spring tides", 1, "Spring tides follow the full and the new moon."),
        ("Storms", 0, "Storm warnings are raised at the harbour office."),
    ]
    for number, (heading, level, body) in enumerate(bodies, start=1):
        pdf.drawString(72, 800, "ACME Field Handbook - internal use")
        pdf.drawString(72, 740, heading)
        pdf.drawString(72, 720, "The harbour office is open on weekdays.")  # a repeated body line stays
        pdf.drawString(72, 700, body)
        pdf.drawString(280, 40, f"Page {number} of 4")
        pdf.bookmarkPage(f"p{number}")
        pdf.addOutlineEntry(heading, f"p{number}", level=level)
        pdf.showPage()
    pdf.save()
    documents = PDFLoader().load_file(str(path))
    assert [document.metadata["page"] for document in documents] == [1, 2, 3, 4]
    for document in documents:
        assert "ACME Field Handbook" not in document.page_content and "of 4" not in document.page_content
        assert "The harbour office is open on weekdays." in document.page_content  # not at an edge
    chunks = split_docs_to_chunks(documents, chunk_size=200, chunk_overlap=0)
    assert _section_of(chunks, "twice a day") == "Tides"
    assert _section_of(chunks, "full and the new moon") == "Tides > Spring tides"
    assert _section_of(chunks, "Storm warnings") == "Storms"
    storms = next(chunk for chunk in chunks if "Storm warnings" in chunk.text)
    assert storms.metadata["page"] == 4 and "Storms" in storms.index_text


def test_running_lines_need_most_pages_and_an_edge() -> None:
    from deepsearcher.loader.noise import strip_running_lines

    bodies = ["Tides rise.", "Storms pass.", "Boats dock.", "Nets dry."]
    pages = [f"Report 2024\n{body}\nshared line\n{body} Again.\n{n}" for n, body in enumerate(bodies, 1)]
    # the edges go, from the outside in; "shared line" repeats too but stays behind lines that do not
    assert strip_running_lines(pages) == [f"{body}\nshared line\n{body} Again." for body in bodies]
    two = ["Header\nbody one\n1", "Header\nbody two\n2"]
    assert strip_running_lines(two) == two  # too few pages to tell a running line from content
    once = ["Cover\ntext", "Other\ntext b\n", "Third\ntext c"]
    assert strip_running_lines(once) == once


def test_a_heading_the_extractor_dropped_is_placed_by_the_words_after_it() -> None:
    from deepsearcher.loader.headings import html_headings, locate_headings

    html = (
        "<h1>Manual</h1><p>Read this first, it explains the whole tool.</p>"
        '<h2 class="chapter">1 Introduction</h2><h3>1.1 Description</h3>'
        "<p>The calculator reads expressions from standard input.</p>"
    )
    text = "\n".join(
        [
            "Manual",
            "Read this first, it explains the whole tool.",
            "The calculator reads expressions from standard input.",
        ]
    )
    located = locate_headings(text, html_headings(html))  # neither h2 nor h3 is a line of the text
    assert located == [[0, "Manual"], [text.index("The calculator"), "Manual > 1 Introduction > 1.1 Description"]]
