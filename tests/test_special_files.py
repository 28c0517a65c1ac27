"""Only regular files are read: FIFOs, sockets and devices are skipped with their kind named,
reads have a deadline, and a busy collection answers at once instead of waiting."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest

from deepsearcher.loader.file_loader import _text
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.server.jobs import CollectionBusyError, JobManager
from deepsearcher.server.path_rules import PathRefusedError, iter_allowed_file_sources, resolve_allowed
from deepsearcher.types import LoaderError


@pytest.fixture
def special_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.txt").write_text("hi there\n", encoding="utf-8")
    os.mkfifo(folder / "p.txt")
    (folder / "link.txt").symlink_to(folder / "a.txt")
    (folder / "fifo-link.txt").symlink_to(folder / "p.txt")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "s.txt"))
    yield folder
    server.close()


def outcomes(sources) -> dict[str, str]:
    result = {}
    for source in sources:
        name = Path(source.reference).name
        if source.skip_reason:
            result[name] = "skipped: " + source.skip_reason
        elif source.error:
            result[name] = "failed: " + source.error
        else:
            result[name] = "loaded: " + source.documents[0].page_content.strip()
    return result


def test_folder_walk_reads_regular_files_and_names_the_others(special_folder: Path) -> None:
    seen = outcomes(iter_file_sources([special_folder], FileLoader()))
    assert seen["a.txt"] == "loaded: hi there"
    assert seen["link.txt"] == "loaded: hi there"  # symlinks are followed to a regular file
    assert seen["p.txt"] == "skipped: not a regular file: it is a FIFO (named pipe)"
    assert seen["fifo-link.txt"] == "skipped: not a regular file: it is a FIFO (named pipe)"
    assert seen["s.txt"] == "skipped: not a regular file: it is a socket"


def test_a_named_fifo_or_device_is_skipped_not_read(special_folder: Path) -> None:
    seen = outcomes(iter_file_sources([special_folder / "p.txt", "/dev/zero"], FileLoader()))
    assert seen == {
        "p.txt": "skipped: not a regular file: it is a FIFO (named pipe)",
        "zero": "skipped: not a regular file: it is a character device",
    }


def test_read_bytes_refuses_a_fifo_without_blocking(special_folder: Path) -> None:
    with pytest.raises(LoaderError, match="FIFO"):
        _text.read_bytes(special_folder / "p.txt", timeout=5)


def test_a_read_that_does_not_finish_in_time_fails_naming_the_deadline(tmp_path: Path, monkeypatch) -> None:
    release = threading.Event()
    monkeypatch.setattr(
        _text, "_read_regular", lambda path, limit: (release.wait(5), b"late")[1]
    )  # a hung mount, simulated
    try:
        with pytest.raises(LoaderError, match=r"longer than 0.2 s"):
            _text.read_bytes(tmp_path / "slow.txt", timeout=0.2)
    finally:
        release.set()


def test_server_path_rules_refuse_special_files_and_skip_them_in_folders(special_folder: Path) -> None:
    roots = [special_folder.resolve()]
    with pytest.raises(PathRefusedError, match="FIFO") as info:
        resolve_allowed(str(special_folder / "p.txt"), roots)
    assert not info.value.forbidden
    seen = outcomes(iter_allowed_file_sources([special_folder.resolve()], FileLoader(), roots))
    assert seen["p.txt"].startswith("skipped: not a regular file")
    assert seen["s.txt"] == "skipped: not a regular file: it is a socket"
    assert seen["a.txt"] == "loaded: hi there"


def test_a_collection_held_by_a_job_answers_busy_naming_the_job() -> None:
    manager = JobManager(workers=1)
    started, release = threading.Event(), threading.Event()

    def stuck(progress):
        started.set()
        release.wait(10)
        return LoadSummary(collection="kb")

    try:
        job = manager.submit("load", "kb", ["x"], stuck)
        assert started.wait(5)
        with pytest.raises(CollectionBusyError, match=f"busy: job {job.id} is loading it"):
            with manager.write_lock("kb", timeout=0.1):
                pass
        with manager.write_lock("other", timeout=0.1):  # other collections are not held up
            pass
        release.set()
        assert asyncio.run(manager.wait(job.id))["status"] == "succeeded"
        with manager.write_lock("kb", timeout=1):
            pass
    finally:
        release.set()
        manager.shutdown()


@pytest.mark.parametrize(
    ("name", "text", "codec", "expected"),
    [
        (
            "latin1.txt",
            "Café crème brûlée, naïve façade. Die Größe der Straße ist überall gleich.\n",
            "latin-1",
            "cp1252",
        ),
        ("russian.md", "Привет, как дела? Это тестовый файл о погоде в Москве.\n", "cp1251", "cp1251"),
        ("plain.txt", "Just ASCII and UTF-8: naïve café.\n", "utf-8", "utf-8"),
    ],
)
def test_text_in_another_encoding_is_detected_and_loaded(
    tmp_path: Path, name: str, text: str, codec: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode(codec))
    documents = FileLoader().load_file(str(path))
    assert documents[0].page_content.strip() == text.strip()
    assert documents[0].metadata["encoding"] == expected


def test_server_path_rules_accept_folders_and_regular_files(special_folder: Path) -> None:
    roots = [special_folder.resolve()]
    assert resolve_allowed(str(special_folder), roots) == special_folder.resolve()
    assert resolve_allowed(str(special_folder / "a.txt"), roots) == (special_folder / "a.txt").resolve()
