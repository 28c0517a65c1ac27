"""Durable jobs: the job table lives in SQLite, so a restart reads unfinished jobs as
`interrupted` (not 404) and they can be resumed; stopping lets a running job reach its next
batch boundary and records it."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.server.jobs import JobManager, JobNotResumable
from deepsearcher.testing.serve_process import ServeProcess


def batches(count: int, started: threading.Event | None = None, pause: float = 0.05):
    """Work that reports `count` embedded batches, `pause` s apart."""

    def work(progress):
        if started is not None:
            started.set()
        for _ in range(count):
            time.sleep(pause)
            progress("embedded", {"chunks": 2})
        summary = LoadSummary(collection="kb")
        summary.add("/data/a.txt", "loaded")
        return summary

    return work


def test_a_restart_reads_unfinished_jobs_as_interrupted_and_resume_completes_them(tmp_path: Path) -> None:
    db = tmp_path / "jobs.sqlite"
    crashed = JobManager(db_path=db)
    started, hang = threading.Event(), threading.Event()
    job = crashed.submit(
        "load",
        "kb",
        ["/data/a.txt"],
        lambda progress: (started.set(), hang.wait(10))[1],
        spec={"paths": ["/data/a.txt"]},
    )
    assert started.wait(5)
    # the process "dies" here: no shutdown, its writes end, a new manager opens the same file
    crashed._db.close()
    restarted = JobManager(db_path=db)
    try:
        seen = restarted.get(job.id)
        assert seen["status"] == "interrupted" and seen["inputs"] == ["/data/a.txt"] and seen["resumable"]
        assert "resume" in seen["error"]
        restarted.resume(job.id, batches(2))
        done = asyncio.run(restarted.wait(job.id))
        assert done["status"] == "succeeded" and done["results"]["loaded"] == ["/data/a.txt"]
        assert done["progress"]["chunks_embedded"] == 4
        with pytest.raises(JobNotResumable, match="succeeded, not interrupted"):
            restarted.resume(job.id, batches(1))
    finally:
        hang.set()
        restarted.shutdown()
    again = JobManager(db_path=db)
    assert again.get(job.id)["status"] == "succeeded"  # the outcome itself was recorded
    again.shutdown()


def test_stopping_lets_the_running_job_reach_a_batch_boundary_and_records_it(tmp_path: Path) -> None:
    db = tmp_path / "jobs.sqlite"
    manager = JobManager(db_path=db)
    started = threading.Event()
    job = manager.submit("load", "kb", ["/data/big.txt"], batches(1000, started, pause=0.02), spec={"paths": []})
    queued = manager.submit("load", "kb", ["/data/later.txt"], batches(1), spec={"paths": []})
    assert started.wait(5)
    time.sleep(0.2)
    began = time.monotonic()
    manager.shutdown(timeout=5)
    assert time.monotonic() - began < 1.0
    reopened = JobManager(db_path=db)
    try:
        stopped = reopened.get(job.id)
        assert stopped["status"] == "interrupted" and 0 < stopped["progress"]["chunks_embedded"] < 2000
        assert reopened.get(queued.id)["status"] == "interrupted"
    finally:
        reopened.shutdown()


# ---------------------------------------------------------------------- the real server process

ROOT = Path(__file__).resolve().parents[1]


def serve_process(base: Path, root: Path, port: int | None = None) -> ServeProcess:
    """`deepsearcher serve` in a subprocess, with the hash embedding (stand-in for the bundled
    model, whose loading would cost seconds per start; the vectors play no part here)."""
    import os

    import yaml

    config = base / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "provide_settings": {
                    "embedding": {"provider": "deepsearcher.testing.hash_embedding:HashEmbedding", "config": {}},
                    "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
                },
                "load_settings": {"chunk_size": 200, "chunk_overlap": 0},
                "server": {"allowed_roots": [str(root)], "data_dir": str(base / "data")},
            }
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return ServeProcess(config, port=port, env=env)


def test_sigterm_stops_the_job_at_a_batch_boundary_and_a_restart_resumes_it(tmp_path: Path) -> None:
    import signal

    import httpx

    root = tmp_path / "root"
    root.mkdir()
    (root / "big.txt").write_text(
        "\n\n".join(f"Paragraph {i} is about item {i} and says a little more to fill it." for i in range(150)),
        encoding="utf-8",
    )
    server = serve_process(tmp_path, root).start()
    try:
        accepted = httpx.post(
            server.url + "/v1/load", json={"inputs": [str(root)], "collection": "kb", "batch_size": 1}
        )
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["job_id"]
        deadline = time.monotonic() + 30
        while httpx.get(f"{server.url}/v1/jobs/{job_id}").json()["progress"]["chunks_embedded"] < 10:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        began = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(15)
        assert time.monotonic() - began < 10
    finally:
        server.stop()

    again = serve_process(tmp_path, root, port=server.port).start()
    try:
        job = httpx.get(f"{again.url}/v1/jobs/{job_id}").json()
        assert job["status"] == "interrupted" and job["resumable"] and job["progress"]["chunks_embedded"] >= 10
        assert httpx.post(f"{again.url}/v1/jobs/{job_id}/resume").status_code == 202
        deadline = time.monotonic() + 60
        while (job := httpx.get(f"{again.url}/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert job["status"] == "succeeded", job
        assert job["results"]["chunks_kept"] >= 10
        sources = httpx.get(f"{again.url}/v1/collections/kb/sources").json()
        assert [(s["reference"], s["complete"]) for s in sources] == [(str(root / "big.txt"), True)]
        # what was stored before SIGTERM was kept, only the rest embedded
        assert job["results"]["chunks_kept"] + job["results"]["embeddings_computed"] == sources[0]["chunks"] > 50
        assert httpx.post(f"{again.url}/v1/jobs/{job_id}/resume").status_code == 409
    finally:
        again.stop()


def test_an_upload_killed_with_the_server_resumes_from_its_staged_files(tmp_path: Path) -> None:
    """SIGKILL mid-job: the staged upload stays in data/uploads/<id>/ and the restarted server resumes it."""
    import signal

    import httpx

    root = tmp_path / "root"
    root.mkdir()
    # ~7,000 chunks, 28 batches: the job is still running when the first batch is reported
    text = "\n\n".join(f"Paragraph {i} is about item {i} and says a little more to fill it." for i in range(20_000))
    server = serve_process(tmp_path, root).start()
    try:
        accepted = httpx.post(
            server.url + "/v1/documents", files={"files": ("big.txt", text.encode())}, data={"collection": "kb"}
        )
        assert accepted.status_code == 202, accepted.text
        job_id = accepted.json()["job_id"]
        deadline = time.monotonic() + 30
        while httpx.get(f"{server.url}/v1/jobs/{job_id}").json()["progress"].get("chunks_embedded", 0) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(15)
    finally:
        server.stop()
    assert "succeeded" not in (tmp_path / "data" / "jobs.sqlite").read_bytes().decode("latin-1")  # killed mid-job
    staged = list((tmp_path / "data" / "uploads").glob("*/big.txt"))
    assert len(staged) == 1  # still there after the kill

    again = serve_process(tmp_path, root, port=server.port).start()
    try:
        job = httpx.get(f"{again.url}/v1/jobs/{job_id}").json()
        assert job["status"] == "interrupted" and job["resumable"], job
        assert httpx.post(f"{again.url}/v1/jobs/{job_id}/resume").status_code == 202
        deadline = time.monotonic() + 60
        while (job := httpx.get(f"{again.url}/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert job["status"] == "succeeded", job
        sources = httpx.get(f"{again.url}/v1/collections/kb/sources").json()
        assert [(s["reference"], s["complete"]) for s in sources] == [("upload://kb/big.txt", True)]
        assert not staged[0].exists()  # cleaned up once done
    finally:
        again.stop()
