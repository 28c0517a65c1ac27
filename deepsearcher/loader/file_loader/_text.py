"""Reading files for loaders: one place that turns OS and decoding failures into LoaderError.

Every loader reads through here so that a missing, unreadable, empty, binary or
non-UTF-8 file fails the same way, with the file named and a reason a user can act on.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deepsearcher.loader.file_loader import _budget
from deepsearcher.types import LoaderError

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)

#: Seconds one file read may take (a hung network mount must not hang a load).
READ_TIMEOUT = float(os.environ.get("DEEPSEARCHER_READ_TIMEOUT", "60"))

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def special_kind(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO (named pipe)", ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_regular_reason(file_path: str | os.PathLike[str]) -> str | None:
    """Why `file_path` (symlinks followed) is not read, or None when it is a regular file or missing.

    Reading a FIFO blocks until a writer appears and a device never ends, so only
    regular files are read.
    """
    try:
        mode = os.stat(file_path).st_mode
    except OSError:
        return None
    kind = special_kind(mode)
    return f"not a regular file: it is {kind}" if kind else None


@dataclass(frozen=True)
class _Snapshot:
    """The bytes of a file as it was when opened, and whether it changed while read."""

    data: bytes
    changed: str | None = None


def _stamp(stat_result: os.stat_result) -> tuple[int, int]:
    return stat_result.st_size, stat_result.st_mtime_ns


def _read_regular(path: str, size_limit: int) -> _Snapshot:
    """Read exactly the bytes the file held when it was opened (a file that keeps growing
    is not followed), refusing one bigger than `size_limit` unread."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer (fstat then refuses it).
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        opened = os.fstat(descriptor)
        kind = special_kind(opened.st_mode)
        if kind:
            raise LoaderError(path, f"not a regular file: it is {kind}")
        if opened.st_size > size_limit:
            raise _budget.BudgetExceeded(path, "max_file_bytes", f"{opened.st_size:,} bytes, over {size_limit:,}")
        data = handle.read(opened.st_size)
        after = os.fstat(descriptor)
    changed = None
    if _stamp(after) != _stamp(opened) or len(data) != opened.st_size:
        changed = (
            f"changed while being read ({opened.st_size:,} bytes when opened, {after.st_size:,} after): "
            f"read the {len(data):,} bytes it held when opened"
        )
    return _Snapshot(data, changed)


def _read_with_deadline(path: str, timeout: float, size_limit: int) -> _Snapshot:
    """`_read_regular` in a daemon thread, abandoned after `timeout` seconds."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["data"] = _read_regular(path, size_limit)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below, re-raised there
            outcome["error"] = exc

    reader = threading.Thread(target=target, name="deepsearcher-read", daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        raise LoaderError(
            path,
            f"reading took longer than {timeout:g} s (a hung mount or device?); skipped",
        )
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["data"]  # type: ignore[return-value]


def read_bytes(file_path: str | os.PathLike[str], timeout: float | None = None) -> bytes:
    """The file's bytes as they were when it was opened; a missing, unreadable, non-regular,
    zero-byte, too-big (the budget's max_file_bytes) or too-slow file raises LoaderError.

    What was read is noted for the pipeline (`_budget.notes`): its hash, and a change
    made while it was being read, so the summary can name the file as changed."""
    path = os.fspath(file_path)
    try:
        limit = _budget.current().max_file_bytes  # read here: the reader thread has its own context
        snapshot = _read_with_deadline(path, READ_TIMEOUT if timeout is None else timeout, limit)
    except FileNotFoundError as exc:
        reason = "dangling symbolic link (its target does not exist)" if os.path.islink(path) else "file not found"
        raise LoaderError(path, reason) from exc
    except IsADirectoryError as exc:
        raise LoaderError(path, "is a directory, not a file") from exc
    except PermissionError as exc:
        raise LoaderError(path, "permission denied") from exc
    except OSError as exc:
        raise LoaderError(path, f"cannot read file: {exc.strerror or exc}") from exc
    data = snapshot.data
    noted = _budget.notes()
    if noted is not None:
        noted.sha256 = hashlib.sha256(data).hexdigest()
        noted.changed = snapshot.changed
    if not data:
        raise LoaderError(path, "empty file")
    return data


_last = threading.local()


def detected_encoding(path: str) -> str | None:
    """The encoding `read_text` found for `path` when it was the last file this thread
    decoded (make_document records it in metadata without every loader passing it on)."""
    if getattr(_last, "path", None) == path:
        return _last.encoding
    return None


def decode_text(path: str, data: bytes) -> str:
    """Decode text: a UTF-8/UTF-16 byte-order mark is honoured, then UTF-8, then the
    encoding charset-normalizer detects (Latin-1, CP1252, Shift-JIS, ...); NUL bytes mean binary."""
    text, encoding = _decode_detected(path, data)
    _last.path, _last.encoding = path, encoding
    if not text.strip():
        raise LoaderError(path, "empty file (only whitespace)")
    return text


def _decode_detected(path: str, data: bytes) -> tuple[str, str]:
    if data.startswith(_UTF16_BOMS):
        return _decode(path, data, "utf-16", 0), "utf-16"
    if data.startswith(codecs.BOM_UTF8):
        return _decode(path, data[len(codecs.BOM_UTF8) :], "utf-8", len(codecs.BOM_UTF8)), "utf-8-sig"
    if b"\x00" in data:
        raise LoaderError(path, "binary file, not text")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        failure = exc
    best = _best_guess(data)
    if best is None or best.encoding in ("utf_8", "utf-8"):
        position = failure.start
        raise LoaderError(
            path,
            f"undecodable bytes: not UTF-8 (byte 0x{data[position]:02x} at position {position}) "
            "and no other text encoding fits",
        ) from failure
    return str(best), best.encoding.replace("_", "-")


def _best_guess(data: bytes) -> CharsetMatch | None:
    """charset-normalizer's best match, except that a Windows code page wins a tie among
    equally clean guesses, Windows-1252 first: those are the common legacy encodings
    (charset-normalizer alone reads Latin-1 French as cp1250 and cp1251 Russian as
    mac_cyrillic)."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    cleanest = min(match.chaos for match in matches)
    tied = [match for match in matches if match.chaos <= cleanest]
    windows = sorted(
        (match for match in tied if match.encoding.startswith("cp125")),
        key=lambda match: match.encoding != "cp1252",
    )
    return windows[0] if windows else matches[0]


def _decode(path: str, data: bytes, encoding: str, offset: int) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        position = offset + exc.start
        raise LoaderError(
            path,
            f"not valid {encoding.upper()} text (byte 0x{data[exc.start]:02x} at position {position})",
        ) from exc


def read_text(file_path: str | os.PathLike[str]) -> str:
    """The file's text, with every failure reported as LoaderError."""
    path = os.fspath(file_path)
    return decode_text(path, read_bytes(path))
