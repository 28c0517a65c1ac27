"""How soon `deepsearcher watch` stores a change once the file has settled.

    python benchmarks/watch_latency.py [--trials 5] [--settle 1.0]

Starts a real `deepsearcher watch` process (watchdog, Milvus Lite in a temp dir, the bundled
embedding model) on an empty folder, then for each trial writes a new file, edits it and deletes
a file, in one write each, and reads the process's output until the matching line ("loaded",
"updated", "removed") appears. It prints, per change, the seconds from the write to that line,
and the same less the settle time (`--settle`: how long a file must stay unchanged before it is
loaded, by design): what a user waits beyond the settle. Target (issue #33): within 5 s of the
file settling.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WAIT_SECONDS = 120
#: The watch process's output lines, each with the time it was read.
Lines = queue.Queue[tuple[float, str]]


def start_watch(folder: Path, config: Path, settle: float) -> tuple[subprocess.Popen[str], Lines]:
    """`deepsearcher watch` in a child process; its lines with the time each was read."""
    code = "import sys; from deepsearcher.cli.main import run; sys.argv[0] = 'deepsearcher'; run()"
    env = {**os.environ, "COLUMNS": "250", "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1"}
    args = ["watch", str(folder), "-c", str(config), "--settle", str(settle), "--collection", "watched"]
    process = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    lines: Lines = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put((time.monotonic(), line.rstrip("\n")))

    threading.Thread(target=read, daemon=True).start()
    return process, lines


def wait_for(lines: Lines, start: str) -> float:
    """When the next line starting with `start` was read."""
    while True:
        try:
            at, line = lines.get(timeout=WAIT_SECONDS)
        except queue.Empty:
            raise SystemExit(f"no line starting {start!r} within {WAIT_SECONDS} s") from None
        if line.startswith(start):
            return at
        if "Traceback" in line or line.startswith("Error"):
            raise SystemExit(f"the watch process failed: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--settle", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ds-watch-latency-") as work:
        root = Path(work)
        folder = root / "notes"
        folder.mkdir()
        config = root / "config.yaml"
        store = root / "milvus.db"
        config.write_text(
            f'provide_settings:\n  vector_db:\n    provider: "Milvus"\n    config:\n      uri: "{store}"\n',
            encoding="utf-8",
        )
        process, lines = start_watch(folder, config, args.settle)
        delays: dict[str, list[float]] = {"loaded": [], "updated": [], "removed": []}
        try:
            wait_for(lines, "watching ")
            for trial in range(args.trials):
                note = folder / f"note{trial}.md"
                texts = (
                    ("loaded", f"# Note {trial}\n\nThe heron {trial} nests by the pond.\n"),
                    ("updated", f"# Note {trial}\n\nThe heron {trial} left in autumn.\n"),
                )
                for kind, text in texts:
                    note.write_text(text, encoding="utf-8")
                    written = time.monotonic()
                    delays[kind].append(wait_for(lines, f"{kind} ") - written)
                if trial:
                    gone = folder / f"note{trial - 1}.md"
                    gone.unlink()
                    written = time.monotonic()
                    delays["removed"].append(wait_for(lines, "removed ") - written)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=WAIT_SECONDS)
    print(f"deepsearcher watch, settle {args.settle} s, {args.trials} trials (bundled model, Milvus Lite)")
    print(f"{'change':<10}{'n':>3}{'median s':>10}{'max s':>8}{'beyond settle, max s':>22}")
    for kind, values in delays.items():
        if values:
            print(
                f"{kind:<10}{len(values):>3}{statistics.median(values):>10.2f}{max(values):>8.2f}"
                f"{max(values) - args.settle:>22.2f}"
            )


if __name__ == "__main__":
    main()
