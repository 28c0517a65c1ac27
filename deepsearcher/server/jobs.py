"""Background load jobs: queued at once, run in worker threads, one at a time per collection.

Milvus Lite lives inside this process, so the server is the only writer of the store.
Two loads into one collection must not interleave (both would see a source as new and
insert it twice), so every collection has a lock, taken by load jobs and by deletions;
jobs for one collection run one after the other in submission order, while jobs for
different collections run side by side (up to `server.job_workers`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.offline_loading.pipeline import ProgressCallback
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.types.errors import DeepSearcherError, report

logger = logging.getLogger("deepsearcher.server.jobs")

#: What a job records to run again (JSON): `services.job_spec` (a load's request, whole) or
#: `services.upload_spec` (the staged files); read back with isinstance checks, never trusted blind.
JobSpec = dict[str, object]
JOB_STATUSES = ("queued", "running", "succeeded", "failed", "partial", "interrupted")
FINISHED = ("succeeded", "failed", "partial", "interrupted")
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


def _wake(future: asyncio.Future[None]) -> None:
    """Resolve a waiter's future (on its own loop) unless it is already done."""
    if not future.done():
        future.set_result(None)


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
    results: dict[str, object] | None = None
    error: str | None = None
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    #: What it takes to run the job again (JSON); None for a job that cannot be resumed.
    spec: JobSpec | None = None
    waiters: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "collection": self.collection,
            "inputs": list(self.inputs),
            "progress": {
                "sources_done": self.sources_done,
                "chunks_embedded": self.chunks_embedded,
            },
            "results": self.results if self.results is not None else empty_results(),
            "error": self.error,
            "created_at": _iso(self.created_at),
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "resumable": self.status == "interrupted" and self.spec is not None,
        }


def empty_results() -> dict[str, object]:
    """The results of a job that has not finished (or failed before loading anything)."""
    return {
        "loaded": [],
        "replaced": [],
        "skipped_unchanged": [],
        "unsupported": [],
        "failed": [],
        "chunks_inserted": 0,
    }


def summary_results(summary: LoadSummary) -> dict[str, object]:
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


class JobInterrupted(DeepSearcherError):
    """Raised at a batch boundary inside a job when the server is stopping."""


INTERRUPTED = (
    "The server stopped before this job finished; POST /v1/jobs/{id}/resume (or load the same "
    "inputs again) to complete it."
)


class JobManager:
    """Runs load jobs in threads; see the module docstring for the ordering rules.

    With `db_path`, every job (state, inputs, the spec needed to run it again, progress,
    results) is kept in a small SQLite file, so after a restart a job that had not finished
    reads `interrupted` instead of vanishing, and `resume` runs it again (idempotently:
    the pipeline keeps what is stored).
    """

    def __init__(self, workers: int = 2, keep: int = 500, db_path: Path | None = None) -> None:
        self._slots = threading.BoundedSemaphore(workers)
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._pending: dict[str, deque[tuple[Job, Work, Callable[[], None] | None]]] = {}
        self._holders: dict[str, str] = {}  # collection -> id of the job holding its lock
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._keep = keep
        self._closed = False
        self._stopping = threading.Event()
        self._db = JobDatabase(db_path) if db_path is not None else None
        if self._db is not None:
            for job in self._db.load(keep):
                self._jobs[job.id] = job

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

    def submit(
        self,
        kind: str,
        collection: str,
        inputs: Iterable[str],
        work: Work,
        owner: str = "",
        cleanup: Callable[[], None] | None = None,
        spec: JobSpec | None = None,
    ) -> Job:
        """Queue `work`; `spec` (JSON) is recorded so the job can be resumed after a restart."""
        job = Job(
            id=uuid.uuid4().hex,
            kind=kind,
            collection=collection,
            inputs=list(inputs),
            owner=owner,
            spec=spec,
        )
        with self._lock:
            if self._closed:
                raise DeepSearcherError("The server is shutting down; no new load jobs are accepted.")
            self._jobs[job.id] = job
            self._forget_old()
        self._save(job)
        self._enqueue(job, work, cleanup)
        logger.info(
            "job %s queued: %s into '%s' (%s)",
            job.id,
            kind,
            collection,
            owner or "local",
        )
        return job

    def resume(self, job_id: str, work: Work, cleanup: Callable[[], None] | None = None) -> Job:
        """Run an interrupted job again under its own id (the pipeline keeps what is stored)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                raise KeyError(job_id)
            if self._closed:
                raise DeepSearcherError("The server is shutting down; no jobs are resumed.")
            if job.status != "interrupted":
                raise JobNotResumable(
                    f"Job {job_id} is {job.status}, not interrupted: only an interrupted job can be resumed."
                )
            job.status, job.error, job.finished_at, job.started_at = (
                "queued",
                None,
                None,
                None,
            )
        self._save(job)
        self._enqueue(job, work, cleanup)
        logger.info("job %s resumed", job.id)
        return job

    def _enqueue(self, job: Job, work: Work, cleanup: Callable[[], None] | None) -> None:
        with self._lock:
            chain = self._pending.setdefault(job.collection, deque())
            chain.append((job, work, cleanup))
            start_chain = len(chain) == 1
        if start_chain:
            # daemon threads: a job stuck in a read must not keep a stopping server alive
            thread = threading.Thread(
                target=self._run_chain,
                args=(job.collection,),
                name="deepsearcher-job",
                daemon=True,
            )
            with self._lock:
                self._threads.add(thread)
            thread.start()

    def _save(self, job: Job) -> None:
        if self._db is not None:
            with self._lock:
                row = job.to_dict()
                row["spec"] = job.spec
            self._db.save(row, job)

    def spec(self, job_id: str) -> JobSpec | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return job.spec if job is not None else None

    def begin_shutdown(self) -> None:
        """Refuse new jobs and make a running one stop at its next batch boundary (SIGTERM)."""
        with self._lock:
            self._closed = True
        self._stopping.set()

    def get(self, job_id: str) -> dict[str, object] | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return job.to_dict() if job is not None else None

    def list(self, collections: set[str] | None = None) -> list[dict[str, object]]:
        """Newest first; only jobs of `collections` when given."""
        with self._lock:
            jobs = [
                job for job in reversed(self._jobs.values()) if collections is None or job.collection in collections
            ]
            return [job.to_dict() for job in jobs]

    def _forget_old(self) -> None:
        """Keep at most `keep` jobs in memory, dropping the oldest finished ones."""
        if len(self._jobs) <= self._keep:
            return
        for job_id in [job_id for job_id, job in self._jobs.items() if job.finished][: len(self._jobs) - self._keep]:
            del self._jobs[job_id]

    def _run_chain(self, collection: str) -> None:
        """Run the collection's jobs in order until none is left (`_run` never raises);
        at most `workers` chains run at once."""
        more = True
        try:
            while more:
                with self._lock:
                    job, work, cleanup = self._pending[collection][0]
                with self._slots:
                    self._run(job, work, cleanup)
                with self._lock:
                    chain = self._pending[collection]
                    chain.popleft()
                    more = bool(chain)
                    if not more:
                        del self._pending[collection]
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _run(self, job: Job, work: Work, cleanup: Callable[[], None] | None) -> None:
        saved_at = [time.monotonic()]

        def on_progress(event: str, info: dict) -> None:
            with self._lock:
                if event in ("source", "skipped", "failed", "unsupported"):
                    job.sources_done += 1
                elif event == "embedded":
                    job.chunks_embedded += int(info.get("chunks", 0))
            if event == "embedded" and self._stopping.is_set():
                raise JobInterrupted(INTERRUPTED.format(id=job.id))  # a batch boundary: all stored batches are whole
            if time.monotonic() - saved_at[0] > 0.5:
                saved_at[0] = time.monotonic()
                self._save(job)

        results: dict[str, object] | None = None
        try:
            with self.collection_lock(job.collection):
                with self._lock:
                    if self._closed:
                        raise JobInterrupted(INTERRUPTED.format(id=job.id))
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
        except JobInterrupted as exc:
            status, error = "interrupted", str(exc)
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
        self._save(job)
        for notify in waiters:
            notify()
        logger.info("job %s %s: %s", job.id, job.status, job.error or "ok")

    async def wait(self, job_id: str) -> dict[str, object]:
        """The job's final state, awaited without holding a thread."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def notify() -> None:
            try:
                loop.call_soon_threadsafe(_wake, future)
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

    def shutdown(self, wait: bool = True, timeout: float = 8.0) -> None:
        """Stop accepting jobs; a running job stops at its next batch boundary (recorded as
        interrupted), queued ones are recorded as interrupted; waits at most `timeout` s."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        self._stopping.set()
        deadline = time.monotonic() + (timeout if wait else 0)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            waiters, left = [], []
            for job in self._jobs.values():
                if not job.finished:
                    job.status, job.error, job.finished_at = (
                        "interrupted",
                        INTERRUPTED.format(id=job.id),
                        time.time(),
                    )
                    waiters.extend(job.waiters)
                    job.waiters = []
                    left.append(job)
        for job in left:
            self._save(job)
        for notify in waiters:
            notify()
        if self._db is not None:
            self._db.close()


class JobNotResumable(DeepSearcherError):
    """Resume was asked for a job that is not interrupted (or cannot be run again)."""


class JobDatabase:
    """The jobs table in SQLite: one row per job, written on every change of state."""

    COLUMNS = (
        "id",
        "kind",
        "collection",
        "owner",
        "status",
        "inputs",
        "spec",
        "progress",
        "results",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    )

    def __init__(self, path: Path) -> None:
        import sqlite3

        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(str(path), check_same_thread=False, timeout=5)
        with self._lock, self._conn:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, kind TEXT, collection TEXT, owner "
                "TEXT, status TEXT, "
                "inputs TEXT, spec TEXT, progress TEXT, results TEXT, error TEXT, created_at REAL, "
                "started_at REAL, finished_at REAL)"
            )

    def save(self, row: dict[str, object], job: Job) -> None:
        values = (
            job.id,
            job.kind,
            job.collection,
            job.owner,
            job.status,
            json.dumps(job.inputs),
            json.dumps(row.get("spec")),
            json.dumps(row["progress"]),
            json.dumps(job.results, default=str) if job.results is not None else None,
            job.error,
            job.created_at,
            job.started_at,
            job.finished_at,
        )
        with self._lock:
            if self._conn is None:
                return
            with self._conn:
                self._conn.execute(
                    f"INSERT OR REPLACE INTO jobs ({', '.join(self.COLUMNS)}) VALUES ({', '.join('?' * len(values))})",
                    values,
                )

    def load(self, keep: int) -> list[Job]:
        """The newest `keep` jobs, oldest first; those that had not finished become interrupted."""
        with self._lock:
            if self._conn is None:  # closed: the server is stopping
                return []
            rows = self._conn.execute(
                f"SELECT {', '.join(self.COLUMNS)} FROM jobs ORDER BY created_at DESC LIMIT ?",
                (keep,),
            ).fetchall()
        jobs = []
        for values in reversed(rows):
            data = dict(zip(self.COLUMNS, values, strict=False))
            progress = json.loads(data["progress"] or "{}")
            job = Job(
                id=data["id"],
                kind=data["kind"],
                collection=data["collection"],
                inputs=json.loads(data["inputs"] or "[]"),
                owner=data["owner"] or "",
                status=data["status"],
                sources_done=int(progress.get("sources_done", 0)),
                chunks_embedded=int(progress.get("chunks_embedded", 0)),
                results=json.loads(data["results"]) if data["results"] else None,
                error=data["error"],
                created_at=data["created_at"],
                started_at=data["started_at"],
                finished_at=data["finished_at"],
                spec=json.loads(data["spec"]) if data["spec"] else None,
            )
            if not job.finished:
                job.status, job.error = "interrupted", INTERRUPTED.format(id=job.id)
                job.finished_at = job.finished_at or time.time()
                self.save({"spec": job.spec, "progress": progress}, job)
            jobs.append(job)
        return jobs

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


# ---------------------------------------------------------------------- work builders


def upload_reference(collection: str, filename: str) -> str:
    """The reference an uploaded file is stored under: stable across re-uploads."""
    return f"upload://{collection}/{filename}"


def iter_upload_sources(
    files: list[tuple[str, Path]], collection: str, file_loader: BaseLoader
) -> Iterable[LoadedSource]:
    """Load staged uploads, each under `upload://<collection>/<original filename>`."""
    from deepsearcher.offline_loading.sources import iter_file_sources

    for filename, path in files:
        reference = upload_reference(collection, filename)
        for source in iter_file_sources([path], file_loader):
            source.reference = reference
            for document in source.documents:
                document.metadata["reference"] = reference
            if source.error is not None:
                source.error = source.error.replace(str(path), filename)
            yield source


def remove_dir(path: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(path, ignore_errors=True)
