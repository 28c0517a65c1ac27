"""Keeping a collection in sync with folders continuously: the watch use case.

Why it is shaped this way:
- The store is the state. Starting is a `load --sync` of the folders, so whatever changed
  while no watcher ran (or while one was killed) is caught up first; nothing is kept on disk
  beside the store that could disagree with it.
- File events (watchdog: inotify, FSEvents, ReadDirectoryChangesW, or polling) only say which
  paths to look at again. A path is handled once no event touched it for `settle` seconds and
  its size and mtime stayed put, so a file being written is loaded once, when complete.
- Each batch goes through `loading.sync_changes` under the collection's write lock: edited
  files are re-loaded (unchanged bytes are skipped), deleted ones removed, and a file that
  reappears under a new name with the same bytes keeps its stored vectors.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepsearcher.app.components import Components
from deepsearcher.app.loading import LoadRequest, load, sync_changes
from deepsearcher.offline_loading.summary import LoadSummary

__all__ = ["ChangeQueue", "FolderWatcher", "change_lines"]

#: Seconds a path must stay quiet (no event, same size and mtime) before it is loaded.
DEFAULT_SETTLE_SECONDS = 1.0


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _ignored(path: str) -> bool:
    """Hidden files (editors' swap files, .git) and temporary names are never loaded."""
    name = os.path.basename(path)
    return name.startswith(".") or name.endswith(("~", ".tmp", ".swp", ".part", ".crdownload"))


@dataclass
class _Pending:
    last_event: float
    stamp: tuple[int, int] | None


@dataclass
class ChangeQueue:
    """Paths touched by file events, released once they have settled."""

    settle: float = DEFAULT_SETTLE_SECONDS
    _pending: dict[str, _Pending] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def touch(self, path: str) -> None:
        if _ignored(path):
            return
        with self._lock:
            self._pending[os.path.abspath(path)] = _Pending(time.monotonic(), _stamp(path))

    def settled(self) -> tuple[list[str], list[str]]:
        """(existing paths to load, paths gone) among those quiet for `settle` seconds."""
        now = time.monotonic()
        changed: list[str] = []
        removed: list[str] = []
        with self._lock:
            for path, pending in list(self._pending.items()):
                if now - pending.last_event < self.settle:
                    continue
                stamp = _stamp(path)
                if stamp != pending.stamp:  # still being written: wait another period
                    self._pending[path] = _Pending(now, stamp)
                    continue
                del self._pending[path]
                (removed if stamp is None else changed).append(path)
        return sorted(changed), sorted(removed)


def _event_handler(queue: ChangeQueue) -> Any:
    from watchdog.events import FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            if event.is_directory and event.event_type == "modified":
                return  # a file in it changed: that file has its own event
            queue.touch(os.fsdecode(event.src_path))
            dest = getattr(event, "dest_path", "")
            if dest:
                queue.touch(os.fsdecode(dest))

    return Handler()


def change_lines(summary: LoadSummary, quiet: set[str] | None = None) -> list[str]:
    """One line per source that changed in the store (unchanged ones, and `quiet` ones, say nothing)."""
    lines = [f"renamed {old} -> {new}" for old, new in summary.renamed]
    moved_to = {new for _, new in summary.renamed} | (quiet or set())
    moved_from = {old for old, _ in summary.renamed}
    words = {"loaded": "loaded", "replaced": "updated", "failed": "failed", "skipped": "skipped"}
    for item in summary.sources:
        if item.outcome not in words or item.source in moved_to:
            continue
        reason = f": {item.reason}" if item.outcome in ("failed", "skipped") and item.reason else ""
        lines.append(f"{words[item.outcome]} {item.source}{reason}")
    if summary.removed_gone:
        lines += [f"removed {reference}" for reference in summary.gone if reference not in moved_from]
    return lines


class FolderWatcher:
    """Watches `folders` and keeps `collection` holding exactly their loadable files."""

    def __init__(
        self,
        components: Components,
        folders: list[str],
        collection: str | None = None,
        settle: float = DEFAULT_SETTLE_SECONDS,
        on_line: Callable[[str], None] = print,
        poll_interval: float = 0.2,
    ) -> None:
        self.components = components
        self.folders = [str(Path(folder).absolute()) for folder in folders]
        self.collection = collection
        self.queue = ChangeQueue(settle)
        self.on_line = on_line
        self.poll_interval = poll_interval

    def catch_up(self) -> LoadSummary:
        """A `load --sync` of the folders: what changed while nothing watched."""
        summary = load(self.components, LoadRequest(inputs=list(self.folders), collection=self.collection, sync=True))
        for line in change_lines(summary, quiet=set(summary.unsupported)):  # not every image at every start
            self.on_line(line)
        return summary

    def apply_settled(self) -> LoadSummary | None:
        """Load / remove the paths that settled; None when none did."""
        changed, removed = self.queue.settled()
        if not changed and not removed:
            return None
        summary = sync_changes(self.components, self.collection, changed, removed)
        for line in change_lines(summary):
            self.on_line(line)
        return summary

    def start_events(self) -> Any:
        """Start following file events (before the catch-up: a change made during it is seen too);
        returns the running observer, for `stop_events`."""
        from watchdog.observers import Observer

        from deepsearcher.types.errors import BadInputError

        for folder in self.folders:
            if not os.path.isdir(folder):
                raise BadInputError(f"Cannot watch {folder}: not a folder.")
        observer = Observer()
        handler = _event_handler(self.queue)
        for folder in self.folders:
            observer.schedule(handler, folder, recursive=True)
        observer.start()
        return observer

    @staticmethod
    def stop_events(observer: Any) -> None:
        observer.stop()
        observer.join(timeout=5)

    def run(self, stop: threading.Event) -> None:
        """Catch up, then follow file events until `stop` is set (a batch under way finishes)."""
        observer = self.start_events()
        try:
            self.catch_up()
            self.on_line(f"watching {', '.join(self.folders)} (Ctrl-C stops)")
            while not stop.wait(self.poll_interval):
                self.apply_settled()
        finally:
            self.stop_events(observer)
