"""No request may stall the others: big bodies are refused unread, long fields by their cap, and the
paths of a load are resolved off the event loop while /health keeps answering.

A real uvicorn server on loopback (ServerThread) and real HTTP clients in threads.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread


def serve(tmp_path: Path, **server: Any) -> ServerThread:
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}}},
        "server": {"allowed_roots": [str(tmp_path)], "data_dir": str(tmp_path / "data"), **server},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return ServerThread(create_app(Configuration(path)))


def test_a_body_over_the_limit_is_refused_unread_and_never_echoed(tmp_path: Path) -> None:
    with serve(tmp_path) as running, httpx.Client(base_url=running.url, timeout=60) as client:
        huge = {"paths": ["/x" * (2 * 1024 * 1024)]}  # 4 MB of path
        response = client.post("/load-files/", json=huge)
        assert response.status_code == 413 and "server.max_request_bytes" in response.json()["error"]
        assert len(response.content) < 1000
        assert response.headers["connection"] == "close"  # the unread rest must not be read as a next request

        def chunks():  # the same without a Content-Length: stopped where it passes the limit
            for _ in range(64):
                yield b'{"paths": ["' + b"/x" * 32768

        chunked = client.post("/v1/load", content=chunks(), headers={"content-type": "application/json"})
        assert chunked.status_code == 413 and len(chunked.content) < 1000
        assert chunked.headers["connection"] == "close"

        long_path = client.post("/load-files/", json={"paths": ["/x" * 300_000]})  # 600 KB, under the body limit
        assert long_path.status_code == 422 and len(long_path.content) < 1000
        assert "at most 4096 characters" in long_path.json()["error"]
        name = client.post("/v1/load", json={"inputs": [str(tmp_path)], "collection": "c" * 100_000})
        assert name.status_code == 422 and len(name.content) < 1000


def test_path_resolution_runs_off_the_event_loop(tmp_path: Path) -> None:
    """1,000 paths of 4,000 characters (4 MB, under a raised limit) take the server seconds to resolve;
    /health answers all the while."""
    paths = ["/" + "/".join([tmp_path.name] * 1000)[:3990] + f"/{index}" for index in range(1000)]
    with serve(tmp_path, max_request_bytes=8 * 1024 * 1024) as running:
        done = threading.Event()
        result: dict[str, Any] = {}

        def big_request() -> None:
            with httpx.Client(base_url=running.url, timeout=300) as client:
                started = time.monotonic()
                result["response"] = client.post("/load-files/", json={"paths": paths})
                result["seconds"] = time.monotonic() - started
            done.set()

        thread = threading.Thread(target=big_request)
        thread.start()
        answered_while_busy = 0
        with httpx.Client(base_url=running.url, timeout=30) as client:
            time.sleep(0.05)
            while not done.is_set():
                assert client.get("/health").status_code == 200
                answered_while_busy += 0 if done.is_set() else 1
                time.sleep(0.02)
        thread.join()
    response = result["response"]
    assert response.status_code == 403, response.text  # outside the roots: refused, after resolving
    assert len(response.content) < 2000  # the 4 MB of paths are not echoed
    if result["seconds"] > 0.5:  # long enough to matter: the loop served /health meanwhile
        assert answered_while_busy >= 2


@pytest.mark.parametrize("count", [1001])
def test_too_many_inputs_are_refused_by_count(tmp_path: Path, count: int) -> None:
    with serve(tmp_path) as running, httpx.Client(base_url=running.url, timeout=60) as client:
        response = client.post("/load-files/", json={"paths": [str(tmp_path)] * count})
        assert response.status_code == 400 and "at most 1000" in response.json()["error"]
        v1 = client.post("/v1/load", json={"inputs": [str(tmp_path)] * count})
        assert v1.status_code == 400 and "at most 1000" in v1.json()["error"]  # counted before any is resolved


def test_a_hard_link_inside_an_allowed_root_is_not_read(tmp_path: Path) -> None:
    """A hard link is a second name of a file: under a root, it may name a file outside it."""
    import os

    from deepsearcher.app.path_rules import PathRefusedError, iter_allowed_file_sources, resolve_allowed
    from deepsearcher.loader.file_loader import FileLoader

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("the secret", encoding="utf-8")
    os.link(secret, root / "link.txt")
    (root / "plain.txt").write_text("fine", encoding="utf-8")
    with pytest.raises(PathRefusedError, match="2 hard links"):
        resolve_allowed(str(root / "link.txt"), [root])
    sources = {Path(s.reference).name: s for s in iter_allowed_file_sources([root], FileLoader(), [root])}
    assert "hard links" in (sources["link.txt"].error or "") and not sources["link.txt"].documents
    assert sources["plain.txt"].error is None and sources["plain.txt"].documents
