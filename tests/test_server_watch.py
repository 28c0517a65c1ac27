"""The server keeps `load_settings.watch` folders in sync, each batch of changes a "watch" job
(real uvicorn on 127.0.0.1, real Milvus Lite and MiniLM, real file events); REST's
`sync` removes what a folder lost."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread

ADMIN = "admin-key-0123456789"
WAIT_SECONDS = 60


def watch_jobs(client: httpx.Client) -> list[dict[str, Any]]:
    response = client.get("/v1/jobs")
    assert response.status_code == 200, response.text
    body = response.json()
    jobs = body["jobs"] if isinstance(body, dict) else body
    return [job for job in jobs if job["kind"] == "watch"]


def wait_for(client: httpx.Client, condition: Any, what: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        for job in watch_jobs(client):
            if job["status"] in ("succeeded", "partial", "failed") and condition(job):
                return job
        time.sleep(0.2)
    raise AssertionError(f"no finished watch job {what} within {WAIT_SECONDS} s: {watch_jobs(client)}")


def test_watched_folders_and_rest_sync(tmp_path: Path) -> None:
    root = tmp_path / "root"
    watched, plain = root / "watched", root / "plain"
    watched.mkdir(parents=True)
    plain.mkdir()
    (watched / "a.md").write_text("# A\n\nThe heron nests by the mill pond.\n", encoding="utf-8")
    for name in ("x.md", "y.md"):
        (plain / name).write_text(f"# {name}\n\nNotes about {name} and the ferry at dawn.\n", encoding="utf-8")
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}}},
        "load_settings": {"watch": [{"path": str(watched), "collection": "watched"}]},
        "server": {
            "api_keys": [{"key": ADMIN, "name": "admin"}],
            "allowed_roots": [str(root)],
            "data_dir": str(tmp_path / "data"),
        },
    }
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    with ServerThread(create_app(Configuration(config))) as running:
        client = httpx.Client(base_url=running.url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
        catch_up = wait_for(client, lambda job: str(watched / "a.md") in job["results"]["loaded"], "loading a.md")
        assert catch_up["status"] == "succeeded" and catch_up["collection"] == "watched"

        (watched / "b.md").write_text("# B\n\nA quartz lantern hangs in the cellar.\n", encoding="utf-8")
        wait_for(client, lambda job: str(watched / "b.md") in job["results"]["loaded"], "loading b.md")
        (watched / "a.md").unlink()
        removed = wait_for(client, lambda job: job["results"].get("gone") == [str(watched / "a.md")], "removing a.md")
        assert removed["status"] == "succeeded" and removed["results"]["removed_gone"] is True

        def rest_load(sync: bool) -> dict[str, Any]:
            body = {"inputs": [str(plain)], "collection": "plain", "sync": sync}
            response = client.post("/v1/load", json=body)
            assert response.status_code == 202, response.text
            return wait_for_job(client, response.json()["job_id"])

        assert rest_load(False)["status"] == "succeeded"
        (plain / "y.md").unlink()
        named = rest_load(False)
        assert named["results"]["gone"] == [str(plain / "y.md")] and named["results"]["removed_gone"] is False
        synced = rest_load(True)
        assert synced["results"]["gone"] == [str(plain / "y.md")] and synced["results"]["removed_gone"] is True
        assert rest_load(True)["results"]["gone"] == []  # y.md is no longer stored
        client.close()


def wait_for_job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "partial", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")
