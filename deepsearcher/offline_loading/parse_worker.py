"""Parsing each file within its budget: a worker process the pipeline can stop.

A loader is third-party code run on files nobody vetted: it may loop for minutes (a
JSON list of a million objects, a pathological PDF) or allocate gigabytes. It runs in one
long-lived worker process (started on the first file that needs parsing, so an unchanged
re-load never starts it) under the per-file budget (`loader.file_loader._budget`): the
worker's address space is capped, and a file that takes longer than `max_parse_seconds`
gets its worker killed and is named with that limit; the next file gets a fresh worker.
The load goes on either way.

The worker is a plain interpreter running this module (not a `multiprocessing` child:
its spawn and forkserver start methods run the user's main script again in the child,
so a DeepSearcher-style script without a `__main__` guard would load, or drop a
collection, twice). An idle worker is kept for the next load of this process with the
same loader and budget, so a script or a server loading many times starts one.

A loader that cannot be sent to another process (a custom one defined in a script) is
run in the calling thread instead, with the same budget but no time or memory limit.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from deepsearcher.loader.file_loader import _budget
from deepsearcher.loader.file_loader._budget import ParseBudget
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.offline_loading.sources import LoadedSource, parse_file

logger = logging.getLogger(__name__)

_READY = "ready"
#: Seconds a new worker may take to start (import the loaders) before parsing falls back to this process.
START_TIMEOUT = 120.0


def _cap_memory(megabytes: int) -> None:
    if megabytes <= 0:
        return
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        wanted = megabytes * _budget.MB
        resource.setrlimit(resource.RLIMIT_AS, (wanted if hard < 0 else min(wanted, hard), hard))
    except (ImportError, ValueError, OSError):  # not on this platform: the time limit still holds
        logger.debug("could not cap the parser's memory", exc_info=True)


#: Idle workers of this process, by (pickled loader, budget): reused by the next load.
_IDLE: dict[tuple[bytes, ParseBudget], tuple[subprocess.Popen[bytes], Connection]] = {}
_IDLE_LOCK = threading.Lock()


def _serve(connection: Connection) -> None:
    """The worker's loop: parse each path sent, send back the source, until the pipe closes."""
    from deepsearcher.utils.logfile import route_child_logs

    route_child_logs()  # pypdf's warnings must not land in the parent's progress bar
    # Ctrl-C reaches the whole process group: the parent stops this worker (closing the pipe ends
    # the loop below), so the worker itself must not die mid-recv with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pickled_loader, budget = connection.recv()
    _cap_memory(budget.max_parse_memory_mb)
    try:
        loader = pickle.loads(pickled_loader)
    except Exception as exc:  # noqa: BLE001 - e.g. a class defined in the caller's script: the caller parses
        connection.send(f"the file loader cannot be rebuilt in a worker process: {exc}")
        return
    from deepsearcher.loader.file_loader import FileLoader  # noqa: F401 - the loaders' imports, before the clock runs

    connection.send(_READY)
    with _budget.using(budget):
        while True:
            try:
                entry = connection.recv()
            except (EOFError, OSError):  # the pipeline is gone (done, or killed)
                return
            source = parse_file(loader, entry)
            try:
                connection.send(source)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                connection.send(LoadedSource(entry.reference, error=f"its documents cannot be passed on: {exc}"))


class ThreadParser:
    """Parses in the calling thread under the budget (no time or memory limit)."""

    def __init__(self, loader: BaseLoader, budget: ParseBudget | None = None) -> None:
        self.loader = loader
        self.budget = budget or ParseBudget()

    def parse(self, entry: LoadedSource) -> LoadedSource:
        with _budget.using(self.budget):
            return parse_file(self.loader, entry)

    def close(self) -> None:
        return None

    def interrupt(self) -> None:
        """End the parse in hand (the load stopped while it ran): a thread cannot be stopped."""
        return None


class ProcessParser(ThreadParser):
    """Parses in a worker process, killed when one file runs past `max_parse_seconds`."""

    def __init__(self, loader: BaseLoader, budget: ParseBudget | None = None) -> None:
        super().__init__(loader, budget)
        try:
            self._pickled: bytes | None = pickle.dumps(loader)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means: parse here instead
            logger.info("file loader %s cannot run in a worker process (%s); parsing in this one", loader, exc)
            self._pickled = None
        self._process: Any = None
        self._connection: Connection | None = None

    def _start(self) -> Connection:
        key = (self._pickled or b"", self.budget)
        with _IDLE_LOCK:
            idle = _IDLE.pop(key, None)
        if idle is not None and idle[0].poll() is None:
            self._process, self._connection = idle
            return idle[1]
        ours, theirs = socket.socketpair()
        package_root = str(Path(__file__).resolve().parents[2])  # importable as from the caller's sys.path
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "PYTHONPATH": path}
        process = subprocess.Popen(
            [sys.executable, "-m", "deepsearcher.offline_loading.parse_worker", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
        )
        theirs.close()
        connection = Connection(ours.detach())
        self._process, self._connection = process, connection
        connection.send((self._pickled, self.budget))
        if not connection.poll(START_TIMEOUT):
            raise OSError(f"the parse worker did not start within {START_TIMEOUT:g} s")
        ready = connection.recv()
        if ready != _READY:
            raise OSError(str(ready))
        return connection

    def parse(self, entry: LoadedSource) -> LoadedSource:
        if self._pickled is None:
            return super().parse(entry)
        try:
            connection = self._connection or self._start()
        except (EOFError, OSError, ValueError) as exc:  # no worker (ValueError: no pass_fds on Windows): parse here
            logger.warning("parsing in this process: %s", exc)
            self._stop()
            self._pickled = None
            return super().parse(entry)
        started = time.monotonic()
        try:
            connection.send(entry)
            if connection.poll(self.budget.max_parse_seconds):
                return connection.recv()  # type: ignore[no-any-return]
        except (EOFError, OSError):
            return self._died(entry)
        self._stop()
        seconds = time.monotonic() - started
        return LoadedSource(
            entry.reference,
            error=f"parsing took longer than {self.budget.max_parse_seconds:g} s (stopped after {seconds:.1f} s); "
            "refused (raise load_settings.max_parse_seconds to load it)",
            limit="max_parse_seconds",
        )

    def _died(self, entry: LoadedSource) -> LoadedSource:
        code = self._process.poll() if self._process is not None else None
        self._stop()
        memory = self.budget.max_parse_memory_mb
        return LoadedSource(
            entry.reference,
            error=f"the parser stopped while reading it (exit status {code}; over {memory} MB of memory?); "
            "refused (raise load_settings.max_parse_memory_mb to load it)",
            limit="max_parse_memory_mb",
        )

    def _stop(self) -> None:
        process, connection = self._process, self._connection
        self._process, self._connection = None, None
        if connection is not None:
            connection.close()
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait(5)

    def interrupt(self) -> None:
        """End the parse in hand by killing the worker: the waiting parse sees the pipe close and
        cleans up (closing the pipe here, under another thread's wait, could block that wait)."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()

    def close(self) -> None:
        """Keep a healthy worker for the next load of this process (its own worker, if one is kept already)."""
        process, connection = self._process, self._connection
        if process is None or connection is None or process.poll() is not None or self._pickled is None:
            self._stop()
            return
        with _IDLE_LOCK:
            if (self._pickled, self.budget) not in _IDLE:
                _IDLE[(self._pickled, self.budget)] = (process, connection)
                self._process, self._connection = None, None
                return
        self._stop()


if __name__ == "__main__":  # the worker: python -m deepsearcher.offline_loading.parse_worker FD
    _serve(Connection(int(sys.argv[1])))
