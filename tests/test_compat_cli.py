"""DeepSearcher's command lines run unchanged: underscore flags, `--flag True`, `--config`
before the subcommand, and the deprecated `--query` / `--load` hint.

The real console entry (`CompatTyper.__call__`, which reads sys.argv) is what runs:
in a subprocess for the deprecated forms and one full load, in-process otherwise (the
embedding model then loads once), with the scripted LLM server and a temp Milvus Lite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import yaml
from helpers import make_docs

from deepsearcher import configuration
from deepsearcher.cli.main import app
from deepsearcher.cli.upstream_argv import normalize
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.vector_db.milvus import Milvus

server = scripted_llm_fixture(name="server", fallback="NO")
ENTRY = [sys.executable, "-m", "deepsearcher.cli.main"]


def run_entry(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The console entry point in this process: (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["deepsearcher", *argv])
    try:
        app()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str, server) -> Path:
    path = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {
            "llm": server.llm_config(retry_base_delay=0.01),
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
        }
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    yield path
    if configuration.vector_db is not None:
        configuration.vector_db.close()


@pytest.mark.parametrize("form", [["--query", "What is Milvus?"], ["--load", "docs/"]])
def test_deprecated_forms_print_the_hint_and_exit_1(form: list[str]) -> None:
    done = subprocess.run([*ENTRY, *form], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "[Deprecated] The use of '--query' and '--load' is deprecated." in done.stderr
    assert "deepsearcher query <your_query> --max_iter 3" in done.stderr
    assert "--collection_name <your_collection_name> --collection_desc" in done.stderr


def test_upstream_load_line_end_to_end(tmp_path: Path, config_file: Path, milvus_uri: str) -> None:
    docs = make_docs(tmp_path / "docs")
    command = [
        *ENTRY,
        "--config",
        str(config_file),
        "load",
        str(docs / "volcano.md"),
        str(docs / "bread.txt"),
        "--collection_name",
        "geo",
        "--collection_desc",
        "Volcanoes and bread",
        "--batch_size",
        "256",
        "--force_new_collection",
        "True",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    assert done.returncode == 0, done.stderr
    with Milvus(uri=milvus_uri) as store:
        info = store.get_collection_info("geo")
        assert info is not None and info.description == "Volcanoes and bread"
        assert sorted(Path(ref).name for ref in store.list_sources("geo")) == ["bread.txt", "volcano.md"]


def test_config_after_the_subcommand_and_boolean_values(monkeypatch, capsys, tmp_path: Path, config_file: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    first = run_entry(
        monkeypatch, capsys, "load", str(docs), "--collection_name", "science", "--config", str(config_file), "--json"
    )
    assert first[0] == 0, first[2]
    assert len(json.loads(first[1])["loaded"]) == 3

    # False: the flag is off, the collection is kept, unchanged files are skipped; "False" is no path
    again = run_entry(
        monkeypatch,
        capsys,
        "--config",
        str(config_file),
        "load",
        str(docs),
        "--collection_name",
        "science",
        "--force_new_collection",
        "False",
        "--json",
    )
    assert again[0] == 0, again[2]
    summary = json.loads(again[1])
    assert len(summary["skipped_unchanged"]) == 3 and summary["loaded"] == [] and summary["failed"] == []

    # True: the collection is dropped and loaded again
    forced = run_entry(
        monkeypatch,
        capsys,
        "load",
        str(docs),
        "--collection_name",
        "science",
        "--force_new_collection",
        "True",
        "-c",
        str(config_file),
        "--json",
    )
    assert forced[0] == 0, forced[2]
    assert len(json.loads(forced[1])["loaded"]) == 3


def test_upstream_query_line(monkeypatch, capsys, tmp_path: Path, config_file: Path, server) -> None:
    docs = make_docs(tmp_path / "docs")
    assert (
        run_entry(monkeypatch, capsys, "--config", str(config_file), "load", str(docs), "--collection_name", "science")[
            0
        ]
        == 0
    )
    server.on("You route a question", "1")
    server.on("Break the question below", '["first compiler"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on("These queries were already searched", "[]")
    server.on("Answer the question using only the numbered sources", "Grace Hopper built the A-0 system [1].")
    code, out, err = run_entry(
        monkeypatch, capsys, "--config", str(config_file), "query", "Who built the first compiler?", "--max_iter", "1"
    )
    assert code == 0, err
    assert "Grace Hopper built the A-0 system" in out


def test_normalize_maps_only_to_options_that_exist() -> None:
    group = typer.main.get_command(app)
    assert normalize(["search", "x", "--top_k", "3"], group) == ["search", "x", "--top-k", "3"]
    assert normalize(["load", "a", "--no_such_flag", "1"], group) == [
        "load",
        "a",
        "--no_such_flag",
        "1",
    ]  # typer reports it
    assert normalize(["load", "--force-new-collection=yes", "a"], group) == ["load", "--force-new-collection", "a"]
    assert normalize(["-v", "-c", "f.yaml", "providers"], group) == ["-v", "providers", "--config", "f.yaml"]
    with pytest.raises(SystemExit) as excinfo:
        normalize(["load", "a", "--force_new_collection=maybe"], group)
    assert excinfo.value.code == 2
