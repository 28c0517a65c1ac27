"""`deepsearcher.tools.log`: DeepSearcher's oldest log module, over `deepsearcher.utils.log`.

Everything is utils.log's (one dev mode, one pair of loggers) except `critical`: the oldest
module only logged it, in dev mode, where utils.log (like DeepSearcher's later module) raises
RuntimeError after logging. Scripts and tests written for the old path keep running.
"""

from __future__ import annotations

from deepsearcher.utils import log as _log
from deepsearcher.utils.log import (
    ColoredFormatter,
    color_print,
    debug,
    dev_formatter,
    dev_handler,
    dev_logger,
    error,
    info,
    progress_handler,
    progress_logger,
    set_dev_mode,
    set_level,
    warning,
)

__all__ = [
    "ColoredFormatter",
    "color_print",
    "critical",
    "debug",
    "dev_formatter",
    "dev_handler",
    "dev_logger",
    "error",
    "info",
    "progress_handler",
    "progress_logger",
    "set_dev_mode",
    "set_level",
    "warning",
]


def critical(message: object) -> None:
    """Log `message` at CRITICAL in dev mode, and return (the oldest module never raised)."""
    if _log.dev_mode:
        dev_logger.critical(message)


def __getattr__(name: str) -> bool:
    if name == "dev_mode":  # the live flag, not a copy taken at import
        return _log.dev_mode
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
