"""Honest load summaries through the real CLI: every input named with what happened to it,
in the table and in --json; a load that finds nothing warns and exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import components_for, write_config
from typer.testing import CliRunner

from deepsearcher.cli.main import app

runner = CliRunner()


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    return write_config(tmp_path / "config.yaml", milvus_uri)


def load(*args: str):
    return runner.invoke(app, ["load", *args], env={"COLUMNS": "250"})


def rows(stdout: str) -> dict[str, str]:
    """Source file name -> its table row."""
    found = {}
    for line in stdout.splitlines():
        for cell in line.split("│"):
            name = Path(cell.strip()).name
            if "." in name and "/" in cell:
                found[name] = line
    return found


def test_every_input_is_named_with_its_outcome(tmp_path: Path, config_file: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("Okapis are related to giraffes.\n", encoding="utf-8")
    (docs / "latin1.txt").write_bytes("Le caf\xe9 cr\xe8me co\xfbte deux euros \xe0 Montr\xe9al.\n".encode("latin-1"))
    (docs / "binary.dat").write_bytes(b"\x00\x01\x02")
    (docs / "notes.xyz").write_text("some notes", encoding="utf-8")
    (docs / "empty.md").write_text("", encoding="utf-8")

    result = load(str(docs), "-c", str(config_file), "--json")
    assert result.exit_code == 1  # empty.md failed
    summary = json.loads(result.stdout)
    outcomes = {Path(item["source"]).name: (item["outcome"], item["reason"]) for item in summary["sources"]}
    assert outcomes["good.txt"] == ("loaded", "")
    assert outcomes["latin1.txt"] == ("loaded", "")
    assert outcomes["binary.dat"][0] == "skipped" and "unsupported file type '.dat'" in outcomes["binary.dat"][1]
    assert outcomes["notes.xyz"][0] == "skipped" and "'.xyz'" in outcomes["notes.xyz"][1]
    assert outcomes["empty.md"] == ("failed", "empty file")

    human = load(str(docs), "-c", str(config_file), "--all")
    table = rows(human.stdout)
    assert "unchanged" in table["good.txt"] and "unchanged" in table["latin1.txt"]
    assert "skipped" in table["binary.dat"] and "unsupported file type '.dat'" in table["binary.dat"]
    assert "skipped" in table["notes.xyz"] and "failed" in table["empty.md"]

    with components_for(config_file, skip=("llm",)).vector_db as store:
        stored = store.list_sources("deepsearcher")
    assert str(docs / "latin1.txt") in stored


def test_an_empty_folder_warns_and_exits_1(tmp_path: Path, config_file: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = load(str(empty), "-c", str(config_file), "--json")
    assert result.exit_code == 1
    summary = json.loads(result.stdout)
    assert summary["ok"] is False and "Nothing was loaded" in summary["warnings"][0]
    assert summary["sources"] == [
        {
            "source": str(empty),
            "outcome": "skipped",
            "reason": "empty folder: no files in it (hidden files are not loaded)",
            "fatal": False,
            "limit": None,
        }
    ]
    human = load(str(empty), "-c", str(config_file))
    assert human.exit_code == 1 and "Warning: Nothing was loaded" in human.stderr


def test_a_folder_of_unsupported_files_warns_and_exits_1(tmp_path: Path, config_file: Path) -> None:
    folder = tmp_path / "pictures"
    folder.mkdir()
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n")
    result = load(str(folder), "-c", str(config_file), "--json")
    summary = json.loads(result.stdout)
    assert result.exit_code == 1 and summary["warnings"] and summary["unsupported"] == [str(folder / "photo.png")]
