"""Where log lines go on a terminal: DeepSearcher's own warnings to stderr, everything else
(pypdf's complaints about a damaged PDF, pymilvus RPC errors and their traces, Milvus Lite's
servicer, gRPC) to a log file, so none of it lands inside a progress bar or next to the
one-line error a command prints. `--verbose` shows everything on the terminal as well.

The file is `$DEEPSEARCHER_LOG_FILE`, else `deepsearcher.log` in the user's log folder;
processes a command starts (the parse worker) write to the same file.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

LOG_FILE_ENV = "DEEPSEARCHER_LOG_FILE"
_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def log_file_path() -> Path:
    configured = os.environ.get(LOG_FILE_ENV)
    if configured:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_log_dir("deepsearcher")) / "deepsearcher.log"


class _OwnRecords(logging.Filter):
    """DeepSearcher's own records (and Python's warnings) are fit for a terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name == "deepsearcher" or record.name.startswith(("deepsearcher.", "dev", "progress"))


def _file_handler(path: Path) -> logging.Handler | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    except OSError:
        return None  # no writable log folder: the library lines are dropped, not shown
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.setLevel(logging.INFO)
    return handler


def route_logs(verbose: bool = False) -> Path:
    """Send library log lines to the log file and only DeepSearcher's warnings to stderr
    (everything with `verbose`); returns the log file's path. gRPC's C core writes to the
    terminal itself, so its verbosity is lowered to errors before it is imported."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    path = log_file_path()
    os.environ[LOG_FILE_ENV] = str(path)  # the parse worker logs there too
    root = logging.getLogger()
    terminal = logging.StreamHandler()
    terminal.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    terminal.setLevel(logging.INFO if verbose else logging.WARNING)
    if not verbose:
        terminal.addFilter(_OwnRecords())
    root.handlers[:] = [terminal]
    handler = _file_handler(path)
    if handler is not None:
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)  # warnings.warn from libraries: to the file, not the terminal
    global _routed
    _routed = True
    return path


_routed = False


def adopt_library_loggers(*names: str) -> None:
    """Once logs are routed, take the terminal handlers a library installed on its own loggers
    (pymilvus prints RPC errors with their traceback to stderr itself) and let its records
    reach the root's handlers: the log file, and the terminal only with --verbose."""
    if not _routed:
        return
    for name in names:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                logger.removeHandler(handler)
        logger.propagate = True


def route_child_logs() -> None:
    """In a process a command started: log to the command's log file, never to the terminal."""
    path = os.environ.get(LOG_FILE_ENV)
    root = logging.getLogger()
    handler = _file_handler(Path(path)) if path else None
    root.handlers[:] = [handler] if handler is not None else [logging.NullHandler()]
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
