"""The per-file budget: how much one file may cost to parse before it is refused by name.

A hostile or accidental file (a DOCX whose XML inflates to gigabytes, a JSON list of a
million tiny objects, a log that keeps growing while it is read) must not stall a load or
exhaust memory. Every loader reads through `_text.read_bytes` and the record helpers, which
check the budget in force here; the pipeline adds the time and memory limits around the
whole parse (a worker process it can stop). A file over a limit raises `BudgetExceeded`,
whose reason names the limit and the setting that raises it (`load_settings.<key>`).
"""

from __future__ import annotations

import contextvars
import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from deepsearcher.types import LoaderError
from deepsearcher.types.json import JSONObject

MB = 1024 * 1024


@dataclass(frozen=True)
class ParseBudget:
    """Limits for one file; each field is a `load_settings` key of the same name."""

    #: Seconds one file's parse may take (then its worker process is stopped).
    max_parse_seconds: float = 60.0
    #: Bytes read from one file (its size when opened): bigger files are refused unread.
    max_file_bytes: int = 256 * MB
    #: Bytes an archive-based file (DOCX, ...) may inflate to, by declared and by actual size.
    max_inflated_bytes: int = 128 * MB
    #: Records (JSON objects, JSONL lines, CSV rows) in one file.
    max_records: int = 100_000
    #: Characters of text one file may yield (about 3,300 chunks of 1,500 characters).
    max_text_chars: int = 5_000_000
    #: Memory (MB of address space) of the parser process; 0 for no limit.
    max_parse_memory_mb: int = 2048

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(item.name for item in fields(cls))

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> ParseBudget:
        """The budget of a `load_settings` mapping (keys not given keep their defaults)."""
        return cls(**{key: settings[key] for key in cls.keys() if settings.get(key) is not None})

    def to_dict(self) -> JSONObject:
        return asdict(self)


class BudgetExceeded(LoaderError):
    """A file went past one limit of its budget; `limit` is the setting's name."""

    def __init__(self, source: str, limit: str, reason: str) -> None:
        super().__init__(source, f"{reason}; refused (raise load_settings.{limit} to load it)")
        self.limit = limit


_current: contextvars.ContextVar[ParseBudget | None] = contextvars.ContextVar("deepsearcher_parse_budget", default=None)


def current() -> ParseBudget:
    """The budget in force in this context (the defaults when none was set)."""
    return _current.get() or ParseBudget()


@contextmanager
def using(budget: ParseBudget) -> Iterator[None]:
    token = _current.set(budget)
    try:
        yield
    finally:
        _current.reset(token)


@dataclass
class ReadNotes:
    """What reading one file revealed beyond its bytes, for the summary."""

    #: sha256 of the bytes the loader read (the source's fingerprint when known).
    sha256: str | None = None
    #: Why the file is named as changed: it changed while it was being read.
    changed: str | None = None
    extra: JSONObject = field(default_factory=dict)


_notes = threading.local()


def start_notes() -> ReadNotes:
    """Begin collecting notes for the file this thread is about to parse."""
    _notes.value = ReadNotes()
    return _notes.value


def notes() -> ReadNotes | None:
    return getattr(_notes, "value", None)


def check_records(path: str, count: int) -> None:
    """Refuse a file once its `count`-th record goes past max_records."""
    limit = current().max_records
    if count > limit:
        raise BudgetExceeded(path, "max_records", f"more than {limit:,} records")


def check_text(path: str, characters: int) -> None:
    limit = current().max_text_chars
    if characters > limit:
        raise BudgetExceeded(path, "max_text_chars", f"{characters:,} characters of text, over {limit:,}")


def checked_archive(path: str, data: bytes) -> bytes:
    """`data` (a ZIP-based file: DOCX, XLSX, ...) once every member's declared size and its
    actual inflated size fit max_inflated_bytes in all. Inflation is streamed and stopped at
    the limit, so a zip bomb costs at most the limit in memory, never what it would inflate to."""
    limit = current().max_inflated_bytes
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return data  # not an archive: the loader names it as corrupt
    with archive:
        members = archive.infolist()
        declared = sum(member.file_size for member in members)
        if declared > limit:
            raise BudgetExceeded(
                path, "max_inflated_bytes", f"its parts declare {declared:,} bytes uncompressed, over {limit:,}"
            )
        inflated = 0
        for member in members:
            try:
                with archive.open(member) as part:
                    while block := part.read(MB):
                        inflated += len(block)
                        if inflated > limit:
                            raise BudgetExceeded(path, "max_inflated_bytes", f"its parts inflate past {limit:,} bytes")
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                raise LoaderError(path, f"corrupt archive: part {member.filename!r}: {exc}") from exc
    return data
