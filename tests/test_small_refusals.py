"""Refusals that say what is wrong: an encrypted DOCX, a DOCX whose main part is not a Word body, and
`collections drop` of a reserved name. Real files (an encrypted DOCX made with msoffcrypto-tool,
Office's own encryption), the real CLI in process, Milvus Lite in a temp dir."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
import yaml
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.loader.file_loader.docx_loader import DocxLoader
from deepsearcher.testing.hostile_files import encrypted_docx, foreign_body_docx
from deepsearcher.types import LoaderError


def plain_docx(path: Path) -> Path:
    document = docx.Document()
    document.add_paragraph("The plans are in the second drawer.")
    document.save(path)
    return path


def test_docx_refusals_name_the_problem(tmp_path: Path) -> None:
    plain = plain_docx(tmp_path / "plain.docx")
    with pytest.raises(LoaderError, match=r"encrypted DOCX \(password-protected\): remove the password"):
        DocxLoader().load_file(encrypted_docx(tmp_path / "locked.docx"))
    foreign = foreign_body_docx(tmp_path / "foreign.docx", plain)  # XML, but not a Word document
    with pytest.raises(LoaderError, match=r"its main part \(word/document.xml\) is not a Word document body"):
        DocxLoader().load_file(foreign)
    assert "second drawer" in DocxLoader().load_file(plain)[0].page_content  # the original still loads


def test_dropping_a_reserved_name_says_it_is_reserved(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    store = {"vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}}}
    config.write_text(yaml.safe_dump({"provide_settings": store}), encoding="utf-8")
    result = CliRunner().invoke(app, ["collections", "drop", "_deepsearcher_collections", "--yes", "-c", str(config)])
    output = " ".join(result.output.split())
    assert result.exit_code != 0 and "names starting with '_deepsearcher_' are reserved" in output, output
    assert "does not exist" not in output
