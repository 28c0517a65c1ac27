"""`deepsearcher watch` with real file events (watchdog on this file system), as a real
process on Milvus Lite: a new file, an edit, a rename and a deletion each give one line
and reach the store; SIGTERM stops it cleanly; a restart catches up with what changed
while it was down."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from helpers import components_for, write_config

#: Generous bound for one change to show up (settle 0.3 s + a load); never reached when it works.
WAIT_SECONDS = 60


class WatchProcess:
    """`deepsearcher watch` in a child process, its stdout read line by line."""

    def __init__(self, folder: Path, config: Path) -> None:
        code = "import sys; from deepsearcher.cli.main import run; sys.argv[0] = 'deepsearcher'; run()"
        env = {**os.environ, "COLUMNS": "250", "PYTHONUNBUFFERED": "1"}
        args = ["watch", str(folder), "-c", str(config), "--settle", "0.3"]
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, start: str) -> str:
        """The next line starting with `start` (earlier lines are kept in `seen`)."""
        while True:
            try:
                line = self.lines.get(timeout=WAIT_SECONDS)
            except queue.Empty:
                raise AssertionError(f"no line starting {start!r} within {WAIT_SECONDS} s; saw {self.seen}") from None
            self.seen.append(line)
            if line.startswith(start):
                return line

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=WAIT_SECONDS)


def references(config: Path) -> set[str]:
    with components_for(config, skip=("llm",)).vector_db as store:
        return set(store.list_sources("deepsearcher"))


def test_watch_follows_changes_and_catches_up_after_a_restart(tmp_path: Path, milvus_uri: str) -> None:
    config = write_config(tmp_path / "config.yaml", milvus_uri)
    folder = tmp_path / "notes"
    folder.mkdir()
    first = folder / "first.md"
    first.write_text("# First\n\nThe heron nests by the mill pond.\n", encoding="utf-8")

    watcher = WatchProcess(folder, config)
    try:
        assert watcher.expect("loaded ").endswith("first.md")  # the catch-up at start
        watcher.expect("watching ")
        second = folder / "second.md"
        second.write_text("# Second\n\nThe quartz lantern hangs in the cellar.\n", encoding="utf-8")
        assert watcher.expect("loaded ") == f"loaded {second}"
        first.write_text("# First\n\nThe heron left the mill pond in autumn.\n", encoding="utf-8")
        assert watcher.expect("updated ") == f"updated {first}"
        renamed = folder / "lantern.md"
        second.rename(renamed)
        assert watcher.expect("renamed ") == f"renamed {second} -> {renamed}"
        first.unlink()
        assert watcher.expect("removed ") == f"removed {first}"
        assert watcher.stop() == 0
        assert watcher.expect("stopped watching").startswith("stopped")
    finally:
        if watcher.process.poll() is None:
            watcher.process.kill()
    assert not any("Traceback" in line for line in watcher.seen)
    assert references(config) == {str(renamed)}

    # While nothing watches: a file is added and one deleted; the next start catches up.
    third = folder / "third.md"
    third.write_text("# Third\n\nThe ferry leaves pier nine at dawn.\n", encoding="utf-8")
    renamed.unlink()
    watcher = WatchProcess(folder, config)
    try:
        assert watcher.expect("loaded ") == f"loaded {third}"
        assert watcher.expect("removed ") == f"removed {renamed}"
        watcher.expect("watching ")
        assert watcher.stop() == 0
    finally:
        if watcher.process.poll() is None:
            watcher.process.kill()
    assert references(config) == {str(third)}
