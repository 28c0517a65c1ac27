"""The `deepsearcher` command end to end: load, search, collections, delete, errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import make_docs, write_config
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.vector_db import _milvus_lite

runner = CliRunner()


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    yield write_config(tmp_path / "config.yaml", milvus_uri)


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    return result


def test_load_search_collections_delete(tmp_path: Path, config_file: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    loaded = invoke(
        "load",
        str(docs),
        "--collection-name",
        "science notes",
        "--collection-desc",
        "Notes on science",
        "-c",
        str(config_file),
        "--json",
    )
    assert loaded.exit_code == 0, loaded.output
    summary = json.loads(loaded.stdout)
    assert summary["collection"] == "science_notes"
    assert summary["chunks_inserted"] == 4 and summary["ok"] is True

    found = invoke(
        "search", "first compiler", "--collection", "science_notes", "--top-k", "2", "-c", str(config_file), "--json"
    )
    assert found.exit_code == 0, found.output
    response = json.loads(found.stdout)
    assert response["collections"] == ["science_notes"] and len(response["results"]) == 2
    hits = response["results"]
    assert hits[0]["rank"] == 1 and hits[0]["collection"] == "science_notes" and "compiler" in hits[0]["passage"]
    assert hits[0]["rank"] == 1 and "Grace Hopper" in hits[0]["text"]
    assert hits[0]["reference"].endswith("records.jsonl")
    # every command closes the store it opened when it ends (tests and hosts run many in one process)
    assert not [path for path in _milvus_lite._users if path.startswith(str(tmp_path))]

    table = invoke("search", "first compiler", "--collection", "science_notes", "-c", str(config_file))
    assert table.exit_code == 0 and "Grace Hopper" in table.stdout and "score" in table.stdout
    for width in ("20", "40", "200"):  # the source is never cut, at any width
        narrow = runner.invoke(
            app,
            ["search", "first compiler", "--collection", "science_notes", "-c", str(config_file)],
            env={"COLUMNS": width},
        )
        assert str(docs / "records.jsonl") in "".join(narrow.stdout.split()), narrow.stdout

    listed = json.loads(invoke("collections", "list", "-c", str(config_file), "--json").stdout)
    assert listed == [
        {
            "name": "science_notes",
            "description": "Notes on science",
            "dim": 384,
            "embedding_model": "all-MiniLM-L6-v2",
            "sources": 3,
        }
    ]

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
    assert summary["failed"] == [
        {"source": str(tmp_path / "bad.txt"), "reason": "binary file, not text", "fatal": True, "limit": None}
    ]
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


def test_query_without_llm_says_how_to_configure(
    tmp_path: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke("query", "What is sourdough?", "-c", str(config_file))
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.output and "base_url" in result.output


def test_real_entry_point_runs_in_a_subprocess(tmp_path: Path, milvus_uri: str) -> None:
    docs = make_docs(tmp_path / "docs")
    config = write_config(tmp_path / "sub.yaml", milvus_uri)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "deepsearcher.cli.main",
        "load",
        str(docs / "bread.txt"),
        "-c",
        str(config),
        "--json",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chunks_inserted"] == 1


def test_help_speaks_the_users_words_and_every_command_takes_collection() -> None:
    """No Python types (`<list[str]>`, `<bool>`) or `{inputs}...` in help; --collection (and
    its alias --collection-name) on every command that targets one collection."""
    for command in (["load"], ["search"], ["query"], ["delete"], ["serve"], ["eval"], ["collections", "drop"]):
        shown = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        assert not re.search(r"<(list\[|str>|int>|bool>|float>|path>)|\{\w+\}", shown.output), shown.output
        if command[0] in ("load", "search", "query", "delete"):
            assert "--collection,--collection-name" in shown.output
    assert "Usage: root load [OPTIONS] [INPUTS]..." in runner.invoke(app, ["load", "--help"]).output.replace(
        "deepsearcher", "root"
    )


def test_a_mistyped_provider_gets_the_closest_name_before_any_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import nullcontext

    from deepsearcher.cli import common

    loads: list[str] = []
    monkeypatch.setattr(common, "model_spinner", lambda description: loads.append(description) or nullcontext())
    bad = tmp_path / "bad.yaml"
    bad.write_text("provide_settings:\n  llm:\n    provider: OpenAl\n")
    result = invoke("query", "x", "-c", str(bad))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "Unknown llm provider 'OpenAl'" in result.output and "Did you mean 'OpenAI'?" in " ".join(
        result.output.split()
    )
    assert loads == []  # refused while building the components: the embedding model never loaded


def test_load_progress_has_a_total_percentage_and_eta() -> None:
    from deepsearcher.cli.load_cmd import _progress

    shown = _progress(enabled=True)
    with shown as on_event:
        on_event("counted", {"files": 2, "more": False})  # the files are counted before the load
        on_event("source", {"source": "/a.txt", "chunks": 3})
        on_event("source", {"source": "/b.txt", "chunks": 5})
        on_event("embedded", {"chunks": 4})
        task = shown.progress.tasks[shown.chunks]
        assert (task.total, task.completed, task.percentage) == (8, 4, 50.0)
        columns = [type(column).__name__ for column in shown.progress.columns]
        assert "TaskProgressColumn" in columns and "_SourcesEta" in columns
        sources = shown.progress.tasks[shown.sources]
        assert (sources.total, sources.completed) == (2, 2)  # so its ETA is the sources' one
