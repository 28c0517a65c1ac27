"""The server's folder watches (`load_settings.watch`): each folder is kept in sync with its
collection, and every batch of changes runs as a job of kind "watch", listed beside the
load jobs (GET /v1/jobs) and holding the collection's write lock like them.

Starting catches up (a `load --sync` of each folder, as a job); then file events settle in
`app.watching.ChangeQueue` and each settled batch becomes one job.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deepsearcher.app import loading
from deepsearcher.app.watching import FolderWatcher
from deepsearcher.server.state import ServerState
from deepsearcher.types.errors import DeepSearcherError

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

    from deepsearcher.offline_loading.summary import LoadSummary

logger = logging.getLogger("deepsearcher.server")

__all__ = ["ServerWatches", "WatchEntry", "watch_entries"]


@dataclass(frozen=True)
class WatchEntry:
    path: str
    collection: str | None = None


def watch_entries(load_settings: dict[str, Any]) -> list[WatchEntry]:
    """The configured folders (checked when the config was read: see config.settings)."""
    entries = []
    for entry in load_settings.get("watch") or []:
        if isinstance(entry, dict):
            entries.append(WatchEntry(str(entry["path"]), entry.get("collection")))
        else:
            entries.append(WatchEntry(str(entry)))
    return entries


class ServerWatches:
    """Follows the configured folders in one thread, submitting a job per settled batch."""

    def __init__(self, state: ServerState, entries: list[WatchEntry], settle: float = 1.0, poll: float = 0.5) -> None:
        self.state = state
        self.poll = poll
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchers = [
            FolderWatcher(state.current(), [entry.path], entry.collection, settle=settle, on_line=logger.info)
            for entry in entries
        ]
        self._observers: list[BaseObserver] = []

    def start(self) -> None:
        for watcher in self._watchers:
            self._observers.append(watcher.start_events())
            request = loading.LoadRequest(inputs=list(watcher.folders), collection=watcher.collection, sync=True)
            self._submit(loading.plan_load(self.state.current(), request), None)
        self._thread = threading.Thread(target=self._follow, name="deepsearcher-watch", daemon=True)
        self._thread.start()

    def _submit(self, plan: loading.LoadPlan, removed: list[str] | None) -> None:
        def work(on_progress: Callable[[str, dict], None]) -> LoadSummary:
            return loading.run_load(self.state.current(), plan, on_progress, removed=removed)

        inputs = plan.inputs + (removed or [])
        self.state.job_manager().submit("watch", plan.collection, inputs, work, owner="watch")

    def _follow(self) -> None:
        while not self._stop.wait(self.poll):
            for watcher in self._watchers:
                changed, removed = watcher.queue.settled()
                if not changed and not removed:
                    continue
                try:
                    self._submit(loading.changes_plan(self.state.current(), watcher.collection, changed), removed)
                except DeepSearcherError as exc:  # shutting down: no new jobs
                    logger.info("watch of %s stopped: %s", ", ".join(watcher.folders), exc)
                    return

    def stop(self) -> None:
        self._stop.set()
        for observer in self._observers:
            FolderWatcher.stop_events(observer)
        if self._thread is not None:
            self._thread.join(timeout=5)
