"""Splitting Documents into Chunks: offsets, wider_text windows and metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.loader.file_loader.markdown_loader import MarkdownLoader
from deepsearcher.loader.splitter import Chunk, iter_chunks, split_docs_to_chunks
from deepsearcher.types import Chunk as TypesChunk
from deepsearcher.types import Document, RetrievalResult

REPEATED = "The same sentence appears in several places of this manual."


def repeated_text() -> str:
    """Distinct filler between identical paragraphs, so each repeat has different surroundings."""
    parts = []
    for name in ("alpha", "beta", "gamma"):
        parts.append(f"Section {name}. " + f"{name} filler words go here. " * 12)
        parts.append(REPEATED)
    return "\n\n".join(parts)


def test_chunk_is_reexported_from_types() -> None:
    assert Chunk is TypesChunk


def test_short_document_stays_one_chunk_with_whole_text() -> None:
    text = "  A short note about otters.\n"
    document = Document(text, {"reference": "notes/otters.txt", "title": "Otters"})
    [chunk] = split_docs_to_chunks([document], chunk_size=1500, chunk_overlap=100)
    assert chunk.text == text
    assert chunk.reference == "notes/otters.txt"
    assert chunk.metadata["wider_text"] == text
    assert chunk.metadata["chunk_index"] == 0 and chunk.metadata["start_index"] == 0


def test_each_chunk_knows_its_own_offset_in_repeated_text() -> None:
    text = repeated_text()
    document = Document(text, {"reference": "manual.txt"})
    chunks = split_docs_to_chunks([document], chunk_size=120, chunk_overlap=20, window_size=40)
    repeats = [chunk for chunk in chunks if chunk.text == REPEATED]
    assert len(repeats) == 3
    starts = [chunk.metadata["start_index"] for chunk in repeats]
    assert starts == sorted(set(starts))  # three different places, in order
    for chunk in chunks:
        start = chunk.metadata["start_index"]
        assert text[start : start + len(chunk.text)] == chunk.text
        assert chunk.metadata["wider_text"] == text[max(0, start - 40) : start + len(chunk.text) + 40]
    # the window around each repeat shows the section it sits in, not the first one
    for chunk, name in zip(repeats, ("alpha", "beta", "gamma"), strict=False):
        assert f"{name} filler" in chunk.metadata["wider_text"]
    assert "gamma" not in repeats[0].metadata["wider_text"]


def test_window_parts_store_the_sides_once_and_a_search_result_joins_them_back() -> None:
    text = repeated_text()
    document = Document(text, {"reference": "manual.txt"})
    whole = split_docs_to_chunks([document], chunk_size=120, chunk_overlap=20, window_size=40)
    parts = split_docs_to_chunks([document], chunk_size=120, chunk_overlap=20, window_size=40, window_parts=True)
    assert [chunk.text for chunk in parts] == [chunk.text for chunk in whole]
    for full, compact in zip(whole, parts, strict=True):
        assert "wider_text" not in compact.metadata  # the chunk is not stored a second time
        assert len(compact.metadata["wider_before"]) <= 40 and len(compact.metadata["wider_after"]) <= 40
        read = RetrievalResult(None, compact.text, compact.reference, dict(compact.metadata))
        assert read.wider_text == full.metadata["wider_text"]
        assert read.metadata["wider_text"] == full.metadata["wider_text"]  # upstream's key, as before
        assert "wider_before" not in read.metadata and "wider_after" not in read.metadata


def test_chunks_cover_long_text_with_overlap_and_indexes() -> None:
    text = " ".join(f"word{i}" for i in range(400))
    chunks = split_docs_to_chunks(
        [Document(text, {"reference": "r"})], chunk_size=200, chunk_overlap=50, window_size=10
    )
    assert len(chunks) > 5
    assert all(len(chunk.text) <= 200 for chunk in chunks)
    assert [chunk.metadata["chunk_index"] for chunk in chunks] == list(range(len(chunks)))
    assert chunks[0].text.startswith("word0 ") and chunks[-1].text.endswith("word399")
    first_end = chunks[0].metadata["start_index"] + len(chunks[0].text)
    assert chunks[1].metadata["start_index"] < first_end  # overlap
    # wider_text is clipped at both ends of the source
    assert chunks[0].metadata["wider_text"].startswith("word0 ")
    assert chunks[-1].metadata["wider_text"].endswith("word399")


def test_chunk_metadata_copies_document_metadata_and_title_goes_to_index_text(tmp_path: Path) -> None:
    path = tmp_path / "whales.md"
    path.write_text("# Blue Whales\n\n" + "Blue whales are the largest animals ever known. " * 10, encoding="utf-8")
    [document] = MarkdownLoader().load_file(str(path))
    document.metadata["page"] = 4
    chunks = split_docs_to_chunks([document], chunk_size=150, chunk_overlap=10)
    assert len(chunks) > 1
    body_chunk = chunks[-1]
    assert body_chunk.metadata["title"] == "Blue Whales"
    assert body_chunk.metadata["page"] == 4
    assert body_chunk.metadata["content_hash"] == document.content_hash
    assert body_chunk.metadata["reference"] == str(path) == body_chunk.reference
    assert "Blue Whales" not in body_chunk.text
    assert body_chunk.index_text.startswith("Blue Whales\n")
    body_chunk.metadata["page"] = 5
    assert document.metadata["page"] == 4  # chunks get copies, not the document's dict


def test_iter_chunks_is_lazy_over_documents() -> None:
    def documents():
        yield Document("first", {"reference": "a"})
        raise RuntimeError("second document requested")

    iterator = iter_chunks(documents())
    assert next(iterator).text == "first"
    with pytest.raises(RuntimeError, match="second document requested"):
        next(iterator)


def test_blank_documents_yield_no_chunks() -> None:
    chunks = split_docs_to_chunks([Document("   \n", {"reference": "blank"}), Document("text", {"reference": "t"})])
    assert [chunk.reference for chunk in chunks] == ["t"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_size": 100, "chunk_overlap": 100}, r"chunk_overlap \(100\) must be smaller than chunk_size \(100\)"),
        ({"chunk_size": 0}, "chunk_size must be positive"),
        ({"chunk_overlap": -1}, "chunk_overlap must be zero or more"),
        ({"window_size": -5}, "window_size must be zero or more"),
    ],
)
def test_invalid_sizes_raise_value_error(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_docs_to_chunks([Document("x", {"reference": "r"})], **kwargs)
    with pytest.raises(ValueError, match=message):
        iter_chunks([], **kwargs)  # checked when called, before any iteration
