"""Background load jobs: queued at once, run in worker threads, one at a time per collection.

Milvus Lite lives inside this process, so the server is the only writer of the store.
Two loads into one collection must not interleave (both would see a source as new and
insert it twice), so every collection has a lock, taken by load jobs and by deletions;
jobs for one collection run one after the other in submission order, while jobs for
different collections run side by side (up to `server.job_workers`).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
import time
import uuid
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from deepsearcher.offline_loading.pipeline import ProgressCallback
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.types.errors import DeepSearcherError, report

logger = logging.getLogger("deepsearcher.server.jobs")

JOB_STATUSES = ("queued", "running", "succeeded", "failed", "partial")
Work = Callable[[ProgressCallback], LoadSummary]

#: Seconds a deletion waits for a collection's write lock before answering "busy".
WRITE_LOCK_WAIT = 2.0


class CollectionBusyError(DeepSearcherError):
    """A collection's write lock is held (by a load job): answered 409 instead of waiting."""

    error_kind = "collection_busy"
    http_status = 409

    def __init__(self, collection: str, job_id: str | None) -> None:
        holder = f"job {job_id} is loading it" if job_id else "another change to it is in progress"
        super().__init__(f"Collection '{collection}' is busy: {holder}; try again when the job has finished.")
        self.collection = collection
        self.job_id = job_id


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Job:
    id: str
    kind: str
    collection: str
    inputs: list[str]
    owner: str = ""
    status: str = "queued"
    sources_done: int = 0
    chunks_embedded: int = 0
    results: dict[str, Any] | None = None
    error: str | None = None
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    waiters: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed", "partial")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "collection": self.collection,
            "inputs": list(self.inputs),
            "progress": {"sources_done": self.sources_done, "chunks_embedded": self.chunks_embedded},
            "results": self.results if self.results is not None else empty_results(),
            "error": self.error,
            "created_at": _iso(self.created_at),
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
        }


def empty_results() -> dict[str, Any]:
    """The results of a job that has not finished (or failed before loading anything)."""
    return {"loaded": [], "replaced": [], "skipped_unchanged": [], "unsupported": [], "failed": [], "chunks_inserted": 0}


def summary_results(summary: LoadSummary) -> dict[str, Any]:
    data = summary.to_dict()
    data["failed"] = [{"source": failure.source, "reason": failure.reason} for failure in summary.failed]
    data.pop("collection", None)
    return data


def status_of(summary: LoadSummary) -> tuple[str, str | None]:
    """succeeded (no failure), partial (some sources failed, others worked) or failed
    (nothing could be loaded, or nothing was found to load)."""
    if not summary.failed:
        if summary.warnings:
            return "failed", " ".join(summary.warnings)
        return "succeeded", None
    worked = summary.worked
    names = "; ".join(f"{failure.source}: {failure.reason}" for failure in summary.failed[:5])
    more = f" (and {len(summary.failed) - 5} more)" if len(summary.failed) > 5 else ""
    if worked:
        return "partial", f"{len(summary.failed)} source(s) failed: {names}{more}"
    return "failed", f"Nothing could be loaded: {names}{more}"


class JobManager:
    """Runs load jobs in threads; see the module docstring for the ordering rules."""

    def __init__(self, workers: int = 2, keep: int = 500) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="deepsearcher-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._pending: dict[str, deque[tuple[Job, Work, Callable[[], None] | None]]] = {}
        self._holders: dict[str, str] = {}  # collection -> id of the job holding its lock
        self._lock = threading.Lock()
        self._keep = keep
        self._closed = False

    # ------------------------------------------------------------------ locks

    def collection_lock(self, collection: str) -> threading.Lock:
        """The lock every writer of `collection` holds (load jobs, deletions, MCP and CLI loads)."""
        from deepsearcher.app.locks import collection_lock

        return collection_lock(collection)

    @contextmanager
    def write_lock(self, collection: str, timeout: float = WRITE_LOCK_WAIT) -> Iterator[None]:
        """Hold `collection`'s write lock, or raise CollectionBusyError naming the job holding it
        after `timeout` seconds: a stuck load must not pile up requests waiting forever."""
        lock = self.collection_lock(collection)
        if not lock.acquire(timeout=timeout):
            with self._lock:
                raise CollectionBusyError(collection, self._holders.get(collection))
        try:
            yield
        finally:
            lock.release()

    # ------------------------------------------------------------------ jobs

    def submit(self, kind: str, collection: str, inputs: Iterable[str], work: Work, owner: str = "", cleanup: Callable[[], None] | None = None) -> Job:
        job = Job(id=uuid.uuid4().hex, kind=kind, collection=collection, inputs=list(inputs), owner=owner)
        with self._lock:
            if self._closed:
                raise DeepSearcherError("The server is shutting down; no new load jobs are accepted.")
            self._jobs[job.id] = job
            self._forget_old()
            chain = self._pending.setdefault(collection, deque())
            chain.append((job, work, cleanup))
            start_chain = len(chain) == 1
        if start_chain:
            self._executor.submit(self._run_chain, collection)
        logger.info("job %s queued: %s into '%s' (%s)", job.id, kind, collection, owner or "local")
        return job

    def get(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return job.to_dict() if job is not None else None

    def list(self, collections: set[str] | None = None) -> list[dict[str, Any]]:
        """Newest first; only jobs of `collections` when given."""
        with self._lock:
            jobs = [job for job in reversed(self._jobs.values()) if collections is None or job.collection in collections]
            return [job.to_dict() for job in jobs]

    def _forget_old(self) -> None:
        """Keep at most `keep` jobs in memory, dropping the oldest finished ones."""
        if len(self._jobs) <= self._keep:
            return
        for job_id in [job_id for job_id, job in self._jobs.items() if job.finished][: len(self._jobs) - self._keep]:
            del self._jobs[job_id]

    def _run_chain(self, collection: str) -> None:
        """Run the collection's jobs in order until none is left (`_run` never raises)."""
        more = True
        while more:
            with self._lock:
                job, work, cleanup = self._pending[collection][0]
            self._run(job, work, cleanup)
            with self._lock:
                chain = self._pending[collection]
                chain.popleft()
                more = bool(chain)
                if not more:
                    del self._pending[collection]

    def _run(self, job: Job, work: Work, cleanup: Callable[[], None] | None) -> None:
        def on_progress(event: str, info: dict) -> None:
            with self._lock:
                if event in ("source", "skipped", "failed", "unsupported"):
                    job.sources_done += 1
                elif event == "embedded":
                    job.chunks_embedded += int(info.get("chunks", 0))

        results: dict[str, Any] | None = None
        try:
            with self.collection_lock(job.collection):
                with self._lock:
                    if self._closed:
                        raise DeepSearcherError("The server shut down before this job started.")
                    job.status = "running"
                    job.started_at = time.time()
                    self._holders[job.collection] = job.id
                try:
                    summary = work(on_progress)
                finally:
                    with self._lock:
                        self._holders.pop(job.collection, None)
            status, error = status_of(summary)
            results = summary_results(summary)
        except Exception as exc:  # noqa: BLE001 - a job must end with a status, never vanish
            status, error = "failed", report(exc, logger, f"job {job.id}").message
        finally:
            if cleanup is not None:
                try:
                    cleanup()
                except Exception:  # noqa: BLE001
                    logger.warning("job %s: cleanup failed", job.id, exc_info=True)
        with self._lock:
            job.results, job.status, job.error = results, status, error
            job.finished_at = time.time()
            waiters, job.waiters = job.waiters, []
        for notify in waiters:
            notify()
        logger.info("job %s %s: %s", job.id, job.status, job.error or "ok")

    async def wait(self, job_id: str) -> dict[str, Any]:
        """The job's final state, awaited without holding a thread."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def notify() -> None:
            try:
                loop.call_soon_threadsafe(lambda: future.done() or future.set_result(None))
            except RuntimeError:  # the loop is gone: nobody is waiting any more
                logger.debug("job %s: its waiter's event loop is closed", job_id)

        with self._lock:
            job = self._jobs[job_id]
            if job.finished:
                return job.to_dict()
            job.waiters.append(notify)
        await future
        with self._lock:
            return job.to_dict()

    def shutdown(self, wait: bool = True) -> None:
        """Stop accepting jobs; running ones are waited for, queued ones end as failed."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=wait, cancel_futures=True)
        with self._lock:
            waiters = []
            for job in self._jobs.values():
                if job.status == "queued":
                    job.status, job.error, job.finished_at = "failed", "The server shut down before this job started.", time.time()
                    waiters.extend(job.waiters)
                    job.waiters = []
        for notify in waiters:
            notify()


# ---------------------------------------------------------------------- work builders


def upload_reference(collection: str, filename: str) -> str:
    """The reference an uploaded file is stored under: stable across re-uploads."""
    return f"upload://{collection}/{filename}"


def iter_upload_sources(files: list[tuple[str, Path]], collection: str) -> Iterable[LoadedSource]:
    """Load staged uploads, each under `upload://<collection>/<original filename>`."""
    from deepsearcher import configuration
    from deepsearcher.offline_loading.sources import iter_file_sources

    for filename, path in files:
        reference = upload_reference(collection, filename)
        for source in iter_file_sources([path], configuration.file_loader):
            source.reference = reference
            for document in source.documents:
                document.metadata["reference"] = reference
            if source.error is not None:
                source.error = source.error.replace(str(path), filename)
            yield source


def remove_dir(path: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(path, ignore_errors=True)
