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
