"""Ctrl-C during `deepsearcher load` (a real SIGINT to a real process on Milvus Lite): one line
saying what was kept and that re-running resumes, no traceback (the parse worker ignores the
SIGINT its process group gets), and re-running the same command completes the load."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import components_for, write_config

from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.parse_worker import ProcessParser
from deepsearcher.offline_loading.sources import iter_file_entries

FILES = 120
WAIT_SECONDS = 120


def cli(*args: str, stored_mark: Path | None = None) -> list[str]:
    """The real CLI; with `stored_mark`, a file appears once its load has stored 3 batches (the
    pipeline's batch announcements), so the test interrupts it mid-load however busy the machine is."""
    code = "import sys; from deepsearcher.cli.main import run; sys.argv[0] = 'deepsearcher'; run()"
    if stored_mark is not None:
        code = (
            "from pathlib import Path; from deepsearcher.offline_loading import pipeline; "
            "pipeline.BATCH_OBSERVERS.append(lambda stage, batch: stage == 'inserted' and batch == 3 "
            f"and Path({str(stored_mark)!r}).touch()); {code}"
        )
    return [sys.executable, "-c", code, *args]


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child: SIGINT's default action, as under a terminal. A test run started in the
    background of a shell inherits SIGINT ignored, and Python then never raises KeyboardInterrupt:
    the load ran on to the end and exited 0."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_in_one_line_and_rerunning_resumes(tmp_path: Path, milvus_uri: str) -> None:
    config = write_config(tmp_path / "config.yaml", milvus_uri)
    docs = tmp_path / "docs"
    docs.mkdir()
    for index in range(FILES):
        (docs / f"note{index:03}.md").write_text(f"# Note {index}\n\nLantern number {index} hangs by door {index}.\n")
    command = cli("load", str(docs), "-c", str(config), "--batch-size", "2")
    env = {**os.environ, "COLUMNS": "200"}
    stored = tmp_path / "three-batches-stored"
    process = subprocess.Popen(
        cli("load", str(docs), "-c", str(config), "--batch-size", "2", stored_mark=stored),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    deadline = time.monotonic() + WAIT_SECONDS
    while not stored.exists() and process.poll() is None and time.monotonic() < deadline:
        # a few batches in (a fixed sleep after the collection appeared: none, or all, on a busy machine)
        time.sleep(0.05)
    assert stored.exists() and process.poll() is None, "the load ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "recv" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Stopped.") and "run the same command again to resume" in lines[0]

    done = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env, timeout=WAIT_SECONDS)
    summary = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert len(summary["loaded"]) + len(summary["skipped_unchanged"]) == FILES
    assert summary["skipped_unchanged"] or summary["chunks_kept"]  # what the first run stored was kept
    with components_for(config, skip=("llm",)).vector_db as store:
        assert len(store.list_sources("deepsearcher")) == FILES


def test_the_parse_worker_survives_a_sigint(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nFirst file.\n")
    (tmp_path / "b.md").write_text("# B\n\nSecond file.\n")
    loader = FileLoader()
    first, second = list(iter_file_entries([tmp_path / "a.md", tmp_path / "b.md"], loader))
    parser = ProcessParser(loader)
    try:
        assert parser.parse(first).documents
        worker = parser._process
        os.kill(worker.pid, signal.SIGINT)
        parsed = parser.parse(second)
        assert parsed.error is None and "Second file" in parsed.documents[0].page_content
        assert parser._process is worker and worker.poll() is None  # the same worker, alive
    finally:
        parser.close()
