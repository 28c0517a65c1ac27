"""Issue 21, one test per row: hostile and changing files are stopped or named within a per-file
budget while the good files load; storage faults end in one line. Small generated files, with the
budget lowered in the load config so each case trips it in well under a second; the real sizes
against the default budget are `benchmarks/faults.py`'s probes."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import components_for, write_config
from typer.testing import CliRunner

from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.cli.main import app
from deepsearcher.offline_loading.sources import VANISHED
from deepsearcher.testing.hostile_files import GrowingFile, big_text_docx, docx_bomb, tiny_objects_json

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

BUDGET = """load_settings:
  max_text_chars: 100000
  max_records: 1000
  max_inflated_bytes: 1048576
"""


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    return write_config(tmp_path / "config.yaml", milvus_uri, BUDGET)


def folder_with(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("Okapis are related to giraffes.\n", encoding="utf-8")
    return docs


def load_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["load", *args, "--json"], env={"COLUMNS": "250"})
    assert result.stdout.lstrip().startswith("{"), result.output
    return result.exit_code, json.loads(result.stdout)


def outcome_of(summary: dict, name: str) -> dict:
    return next(item for item in summary["sources"] if Path(item["source"]).name == name)


def test_a_docx_with_one_huge_text_node_is_refused_by_its_text_limit(tmp_path: Path, config_file: Path) -> None:
    docs = folder_with(tmp_path)
    big_text_docx(docs / "huge.docx", 300_000)
    code, summary = load_json(str(docs), "-c", str(config_file))
    huge = outcome_of(summary, "huge.docx")
    assert code == 1 and huge["outcome"] == "failed" and huge["limit"] == "max_text_chars"
    assert "300,000 characters of text, over 100,000" in huge["reason"]
    assert outcome_of(summary, "good.txt")["outcome"] == "loaded"


def test_a_json_list_of_many_tiny_objects_is_refused_by_the_record_limit(tmp_path: Path, config_file: Path) -> None:
    docs = folder_with(tmp_path)
    tiny_objects_json(docs / "many.json", 5_000)
    code, summary = load_json(str(docs), "-c", str(config_file))
    many = outcome_of(summary, "many.json")
    assert code == 1 and many["limit"] == "max_records"
    assert "more than 1,000 records" in many["reason"] and "load_settings.max_records" in many["reason"]
    assert outcome_of(summary, "good.txt")["outcome"] == "loaded"


def test_a_file_growing_while_read_is_read_up_to_its_size_at_open_and_named_changed(
    tmp_path: Path, milvus_uri: str
) -> None:
    """It grows all along (~100 KB/s) and, so the test does not hang on timing, by 64 KB
    right after the files are listed."""
    config_file = write_config(tmp_path / "config.yaml", milvus_uri)  # the default budget
    docs = folder_with(tmp_path)
    live_path = docs / "live.log.txt"

    def grow_after_listing(event: str, info: dict) -> None:
        if event == "counted":
            with live_path.open("a", encoding="utf-8") as handle:
                handle.write("x" * 65536 + "\n")

    components = components_for(config_file, skip=("llm",))
    with GrowingFile(live_path, start_bytes=8192, block=1024), components.vector_db as store:
        summary = load(components, LoadRequest(inputs=[str(docs)]), on_progress=grow_after_listing)
        size_after = live_path.stat().st_size
        stored = store.list_sources("deepsearcher")
    live = next(item for item in summary.sources if Path(item.source).name == "live.log.txt")
    assert not summary.ok and live.outcome == "loaded" and "changed during the load" in live.reason
    assert [Path(item.source).name for item in summary.changed] == ["live.log.txt"]
    assert str(live_path) in stored
    chunk_size = components.embedding_model.default_chunk_size()
    assert stored[str(live_path)].chunk_count * chunk_size < size_after  # not followed to its end


def test_files_deleted_during_the_load_are_each_named_vanished(tmp_path: Path, config_file: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for index in range(30):
        (docs / f"f{index:02d}.txt").write_text(f"File number {index} says something.\n", encoding="utf-8")

    def delete_half(event: str, info: dict) -> None:
        if event == "counted":  # the files are listed: now half of them go
            for index in range(0, 30, 2):
                (docs / f"f{index:02d}.txt").unlink()

    components = components_for(config_file, skip=("llm",))
    with components.vector_db:
        summary = load(components, LoadRequest(inputs=[str(docs)]), on_progress=delete_half)
    vanished = sorted(Path(item.source).name for item in summary.failed if item.reason == VANISHED)
    assert vanished == [f"f{index:02d}.txt" for index in range(0, 30, 2)]
    assert len(summary.loaded) == 15 and summary.ok is False


def test_file_names_with_a_newline_undecodable_bytes_or_too_many_characters(tmp_path: Path, config_file: Path) -> None:
    docs = folder_with(tmp_path)
    (docs / "two\nlines.txt").write_text("A name with a newline.\n", encoding="utf-8")
    with open(os.fsencode(docs) + b"/caf\xe9-latin1.txt", "wb") as handle:
        handle.write(b"A name that is not UTF-8.\n")
    (docs / ("n" * 251 + ".txt")).write_text("The longest name a file may have.\n", encoding="utf-8")
    too_long = str(docs / ("x" * 300 + ".txt"))

    result = runner.invoke(app, ["load", str(docs), too_long, "-c", str(config_file), "--all"], env={"COLUMNS": "400"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "two\\nlines.txt" in result.stdout and "caf\\xe9-latin1.txt" in result.stdout
    assert "File name too long" in result.stdout  # the 300-character name, refused by name

    code, summary = load_json(str(docs), too_long, "-c", str(config_file))
    outcomes = {Path(item["source"]).name: item["outcome"] for item in summary["sources"]}
    assert outcomes["two\nlines.txt"] == "unchanged" and outcomes["caf\\xe9-latin1.txt"] == "unchanged"
    assert outcomes["n" * 251 + ".txt"] == "unchanged" and outcomes["x" * 300 + ".txt"] == "failed"


def test_a_docx_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path, config_file: Path) -> None:
    docs = folder_with(tmp_path)
    docx_bomb(docs / "bomb.docx", 64 * 1024 * 1024)  # 64 MB of XML in ~64 KB
    assert (docs / "bomb.docx").stat().st_size < 200_000
    code, summary = load_json(str(docs), "-c", str(config_file))
    bomb = outcome_of(summary, "bomb.docx")
    assert code == 1 and bomb["limit"] == "max_inflated_bytes"
    assert "declare 67,109" in bomb["reason"]  # refused from the sizes its parts declare
    assert outcome_of(summary, "good.txt")["outcome"] == "loaded"


def _limit_file_size() -> None:
    """In the child: files may not grow past 256 KB, and passing it fails the write (EFBIG)
    instead of killing the process, as a full disk fails it with ENOSPC."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, resource.RLIM_INFINITY))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_a_store_that_cannot_be_written_ends_in_one_line_and_the_trace_goes_to_the_log(tmp_path: Path) -> None:
    # A full disk needs a small file system (root only); a file size limit fails Milvus Lite's
    # writes the same way (an OS error inside pymilvus' answer) for any user.
    config = write_config(tmp_path / "config.yaml", str(tmp_path / "milvus.db"), "load_settings:\n  batch_size: 64\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    for index in range(80):
        (docs / f"f{index}.txt").write_text(" ".join(f"w{index}x{j} topic {j}" for j in range(600)), encoding="utf-8")
    log = tmp_path / "deepsearcher.log"
    done = subprocess.run(
        [sys.executable, "-m", "deepsearcher.cli.main", "load", str(docs), "-c", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT), "DEEPSEARCHER_LOG_FILE": str(log), "COLUMNS": "300"},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limit_file_size,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr and "RPC error" not in done.stderr, done.stderr[-3000:]
    assert errors[-1].startswith("Error: Milvus") and "cannot be written" in errors[-1], errors[-3:]
    assert "ulimit -f" in done.stderr
    assert "Traceback" in log.read_text(encoding="utf-8")  # the library's trace, kept for a bug report
