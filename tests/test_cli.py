"""The `deepsearcher` command end to end: load, search, collections, delete, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_docs, write_config
from deepsearcher import configuration
from deepsearcher.cli.main import app

runner = CliRunner()


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    yield write_config(tmp_path / "config.yaml", milvus_uri)
    if configuration.vector_db is not None:
        configuration.vector_db.close()  # release the Lite file for the next test


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    return result


def test_load_search_collections_delete(tmp_path: Path, config_file: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    loaded = invoke("load", str(docs), "--collection-name", "science notes", "--collection-desc", "Notes on science", "-c", str(config_file), "--json")
    assert loaded.exit_code == 0, loaded.output
    summary = json.loads(loaded.stdout)
    assert summary["collection"] == "science_notes"
    assert summary["chunks_inserted"] == 4 and summary["ok"] is True

    found = invoke("search", "first compiler", "--collection", "science_notes", "--top-k", "2", "-c", str(config_file), "--json")
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)
    assert hits[0]["rank"] == 1 and "Grace Hopper" in hits[0]["text"]
    assert hits[0]["reference"].endswith("records.jsonl")

    table = invoke("search", "first compiler", "--collection", "science_notes", "-c", str(config_file))
    assert table.exit_code == 0 and "Grace Hopper" in table.stdout and "score" in table.stdout

    listed = json.loads(invoke("collections", "list", "-c", str(config_file), "--json").stdout)
    assert listed == [{"name": "science_notes", "description": "Notes on science", "dim": 384, "embedding_model": "all-MiniLM-L6-v2", "sources": 3}]

    deleted = invoke("delete", str(docs / "records.jsonl"), "--collection", "science_notes", "-c", str(config_file))
    assert deleted.exit_code == 0 and "Deleted 2 chunks" in deleted.stdout
    again = invoke("delete", str(docs / "records.jsonl"), "--collection", "science_notes", "-c", str(config_file))
    assert again.exit_code == 1 and "Nothing to delete" in again.stdout

    dropped = invoke("collections", "drop", "science_notes", "--yes", "-c", str(config_file))
    assert dropped.exit_code == 0
    assert json.loads(invoke("collections", "list", "-c", str(config_file), "--json").stdout) == []


def test_reload_reports_skips_and_failed_inputs_set_exit_status(tmp_path: Path, config_file: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    assert invoke("load", str(docs), "-c", str(config_file)).exit_code == 0
    (tmp_path / "bad.txt").write_bytes(b"\x00\x01binary")
    second = invoke("load", str(docs), str(tmp_path / "bad.txt"), "-c", str(config_file), "--json")
    assert second.exit_code == 1
    summary = json.loads(second.stdout)
    assert len(summary["skipped_unchanged"]) == 3 and summary["embeddings_computed"] == 0
    assert summary["failed"] == [{"source": str(tmp_path / "bad.txt"), "reason": "binary file, not text", "fatal": True}]
    human = runner.invoke(app, ["load", str(tmp_path / "bad.txt"), "-c", str(config_file)], env={"COLUMNS": "250"})
    row = next(line for line in human.stdout.splitlines() if "bad.txt" in line)
    assert human.exit_code == 1 and "failed" in row and "binary file, not text" in row


def test_bad_config_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("provide_settings:\n  vector_db:\n    provider: NoSuchDB\n")
    result = invoke("search", "x", "-c", str(bad))
    assert result.exit_code == 1
    assert "Unknown vector_db provider 'NoSuchDB'" in result.output
    assert "Traceback" not in result.output


def test_query_without_llm_says_how_to_configure(tmp_path: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke("query", "What is sourdough?", "-c", str(config_file))
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.output and "base_url" in result.output


def test_real_entry_point_runs_in_a_subprocess(tmp_path: Path, milvus_uri: str) -> None:
    docs = make_docs(tmp_path / "docs")
    config = write_config(tmp_path / "sub.yaml", milvus_uri)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "deepsearcher.cli.main", "load", str(docs / "bread.txt"), "-c", str(config), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chunks_inserted"] == 1
