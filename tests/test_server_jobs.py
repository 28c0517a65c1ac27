"""The job manager on its own: statuses, errors, one job at a time per collection."""

from __future__ import annotations

import asyncio
import threading
import time

from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.server.jobs import JobManager
from deepsearcher.types import DeepSearcherError


def wait(manager: JobManager, job_id: str) -> dict:
    return asyncio.run(manager.wait(job_id))


def summary(loaded: list[str], failed: list[tuple[str, str]] = ()) -> LoadSummary:
    result = LoadSummary(collection="c", loaded=list(loaded), chunks_inserted=len(loaded))
    for source, reason in failed:
        result.fail(source, reason)
    return result


def test_statuses_and_results() -> None:
    manager = JobManager(workers=2)
    try:
        ok = manager.submit("load", "a", ["x"], lambda progress: summary(["x"]))
        partial = manager.submit("load", "b", ["x", "y"], lambda progress: summary(["x"], [("y", "cannot read")]))
        failed = manager.submit("load", "c", ["y"], lambda progress: summary([], [("y", "cannot read")]))
        assert wait(manager, ok.id)["status"] == "succeeded"
        job = wait(manager, partial.id)
        assert job["status"] == "partial" and job["results"]["failed"] == [{"source": "y", "reason": "cannot read"}]
        assert "y: cannot read" in job["error"] and job["finished_at"] >= job["created_at"]
        assert wait(manager, failed.id)["status"] == "failed"
    finally:
        manager.shutdown()


def test_errors_end_the_job_without_leaking_internals() -> None:
    def bad_config(progress):
        raise DeepSearcherError("Collection 'a' was built with another embedding model.")

    def crash(progress):
        raise RuntimeError("secret internals")

    manager = JobManager()
    try:
        known = wait(manager, manager.submit("load", "a", [], bad_config).id)
        assert (
            known["status"] == "failed" and known["error"] == "Collection 'a' was built with another embedding model."
        )
        assert known["results"]["loaded"] == [] and known["results"]["failed"] == []
        unknown = wait(manager, manager.submit("load", "a", [], crash).id)
        assert unknown["status"] == "failed" and "error id" in unknown["error"] and "secret" not in unknown["error"]
    finally:
        manager.shutdown()


def test_one_job_at_a_time_per_collection_in_order() -> None:
    manager = JobManager(workers=4)
    active: dict[str, int] = {"same": 0, "other": 0}
    most = {"same": 0, "other": 0}
    order: list[int] = []
    overlap = threading.Event()
    lock = threading.Lock()

    def work(collection: str, index: int):
        def run(progress):
            with lock:
                active[collection] += 1
                most[collection] = max(most[collection], active[collection])
                if active["same"] and active["other"]:
                    overlap.set()
                if collection == "same":
                    order.append(index)
            progress("source", {"source": str(index)})
            progress("embedded", {"chunks": 3})
            time.sleep(0.05)
            with lock:
                active[collection] -= 1
            return summary([str(index)])

        return run

    try:
        jobs = [manager.submit("load", "same", [], work("same", i)) for i in range(5)]
        jobs.append(manager.submit("load", "other", [], work("other", 0)))
        finished = [wait(manager, job.id) for job in jobs]
        assert all(job["status"] == "succeeded" for job in finished)
        assert most["same"] == 1 and order == [0, 1, 2, 3, 4]
        assert overlap.is_set()  # another collection does not wait for this one
        assert finished[0]["progress"] == {"sources_done": 1, "chunks_embedded": 3}
        assert [job["id"] for job in manager.list({"other"})] == [jobs[-1].id]
    finally:
        manager.shutdown()


def test_shutdown_interrupts_queued_jobs() -> None:
    manager = JobManager(workers=1)
    gate = threading.Event()
    first = manager.submit("load", "a", [], lambda progress: (gate.wait(5), summary(["x"]))[1])
    queued = manager.submit("load", "a", [], lambda progress: summary(["y"]))
    threading.Timer(0.2, gate.set).start()
    manager.shutdown()
    assert manager.get(first.id)["status"] == "succeeded"
    job = manager.get(queued.id)
    assert job["status"] == "interrupted" and "resume" in job["error"]
