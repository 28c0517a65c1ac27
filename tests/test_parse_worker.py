"""The parse worker is a plain interpreter: a DeepSearcher-style script without a `__main__`
guard runs once (multiprocessing's spawn would run it again in the child), a loader class
defined in the script is parsed in the caller instead, and one worker serves many loads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.parse_worker import ProcessParser
from deepsearcher.offline_loading.sources import LoadedSource

ROOT = Path(__file__).resolve().parents[1]


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "notes.txt").write_text("Grace Hopper built the A-0 system.", encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )


PARSE = """
    from pathlib import Path
    from deepsearcher.offline_loading.parse_worker import ProcessParser
    from deepsearcher.offline_loading.sources import LoadedSource
    print("top level of the script")
    parser = ProcessParser(LOADER)
    source = parser.parse(LoadedSource("notes.txt", read_path=Path("notes.txt").resolve()))
    print("worker" if parser._process is not None else "in process", source.documents[0].page_content)
    parser.close()
"""


def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    done = run_script(
        tmp_path,
        "from deepsearcher.loader.file_loader.file_loader import FileLoader\nLOADER = FileLoader()\n"
        + textwrap.dedent(PARSE),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("top level of the script") == 1
    assert "worker Grace Hopper built the A-0 system." in done.stdout


def test_a_loader_defined_in_the_script_is_parsed_in_the_caller(tmp_path: Path) -> None:
    done = run_script(
        tmp_path,
        "from deepsearcher.loader.file_loader.file_loader import FileLoader\n"
        "class MyLoader(FileLoader):\n    pass\nLOADER = MyLoader()\n" + textwrap.dedent(PARSE),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("top level of the script") == 1
    assert "in process Grace Hopper built the A-0 system." in done.stdout


def test_one_idle_worker_serves_the_next_load_of_the_process(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("First file.", encoding="utf-8")
    first = ProcessParser(FileLoader())
    first.parse(LoadedSource("a.txt", read_path=str(tmp_path / "a.txt")))
    worker = first._process
    first.close()
    second = ProcessParser(FileLoader())
    source = second.parse(LoadedSource("a.txt", read_path=str(tmp_path / "a.txt")))
    assert second._process is worker and source.documents[0].page_content == "First file."
    second._stop()
    assert worker.poll() is not None
