"""DeepSearcher's `log` helpers, so scripts that call `log.color_print(...)` keep working.

Two standard-library loggers: "dev" (debug/info/warning/error, shown only after
`set_dev_mode(True)`, as in DeepSearcher) and "progress" (`color_print`, always shown).
`critical` logs and raises RuntimeError, which is what DeepSearcher's callers expect.
Colours are plain ANSI codes, and are left out when the stream is not a terminal or
NO_COLOR is set.
"""

from __future__ import annotations

import logging
import os
import sys

_ANSI = {"DEBUG": "36", "INFO": "32", "WARNING": "33", "ERROR": "31", "CRITICAL": "35"}


def _use_color(stream: object) -> bool:
    return not os.environ.get("NO_COLOR") and bool(getattr(stream, "isatty", lambda: False)())


class ColoredFormatter(logging.Formatter):
    """Colours a whole record by its level (cyan, green, yellow, red, magenta)."""

    def __init__(self, fmt: str | None = None, color: bool | None = None) -> None:
        super().__init__(fmt)
        self.color = color

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        color = self.color if self.color is not None else _use_color(sys.stderr)
        code = _ANSI.get(record.levelname)
        return f"\033[{code}m{text}\033[0m" if color and code else text


def _logger(name: str, fmt: str) -> logging.Logger:
    logger = logging.getLogger(name)
    if not any(getattr(handler, "_deepsearcher_log", False) for handler in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(ColoredFormatter(fmt))
        handler._deepsearcher_log = True  # type: ignore[attr-defined]  # re-imports add no second handler
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


dev_logger = _logger("dev", "%(asctime)s - %(levelname)s - %(message)s")
progress_logger = _logger("progress", "%(message)s")


def _our_handler(logger: logging.Logger) -> logging.Handler:
    return next(handler for handler in logger.handlers if getattr(handler, "_deepsearcher_log", False))


#: DeepSearcher's module names for the handlers and the dev formatter (scripts reconfigure them).
dev_handler = _our_handler(dev_logger)
dev_formatter = dev_handler.formatter
progress_handler = _our_handler(progress_logger)
dev_mode = False


def set_dev_mode(mode: bool) -> None:
    """True: debug/info/warning/error are shown; False (default): they are dropped."""
    global dev_mode
    dev_mode = bool(mode)


def set_level(level: int | str) -> None:
    """Level of the dev logger (e.g. logging.DEBUG to see `debug` lines in dev mode)."""
    dev_logger.setLevel(level)


def debug(message: object) -> None:
    if dev_mode:
        dev_logger.debug(message)


def info(message: object) -> None:
    if dev_mode:
        dev_logger.info(message)


def warning(message: object) -> None:
    if dev_mode:
        dev_logger.warning(message)


def error(message: object) -> None:
    if dev_mode:
        dev_logger.error(message)


def critical(message: object) -> None:
    """Log `message` (always) and raise RuntimeError(message)."""
    dev_logger.critical(message)
    raise RuntimeError(message)


def color_print(message: object, **kwargs: object) -> None:
    """Print a progress line (always shown); extra keyword arguments are accepted and ignored
    as in DeepSearcher."""
    progress_logger.info(message)
