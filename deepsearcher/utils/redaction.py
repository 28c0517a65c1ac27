"""Secrets never reach a log line: API keys, bearer tokens and secret query parameters are masked
in every record the process logs, whoever logs it (uvicorn's access log included).

A filter on one logger or handler misses records of other loggers and handlers added later
(uvicorn configures its own at start), so the mask is applied where every record is made: the
log record factory. A record whose line holds a secret gets the masked line as its message; the
access log's records keep their arguments' shape (uvicorn's formatter unpacks them), each one
masked. Known secret values (the server's configured keys, the providers' api keys) are masked
wherever they appear; unknown ones (a wrong key guessed in `?api_key=`) by where they sit: a
secret-named query parameter or JSON field, an Authorization / Bearer value.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable

__all__ = ["MASK", "install", "redact", "register_secrets"]

MASK = "[redacted]"
ACCESS_LOGGER = "uvicorn.access"
#: Values shorter than this are not masked by value (masking "a" everywhere would garble logs).
MIN_SECRET_CHARS = 6

_NAMES = (
    r"api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|auth|authorization"
    r"|password|passwd|secret|client[_-]?secret|signature|sig"
)
_PATTERNS = (
    # Authorization: Bearer xyz / Basic xyz
    (re.compile(r"\b((?:Bearer|bearer|BEARER|Basic)\s+)[A-Za-z0-9._~+/=:-]{8,}"), r"\1" + MASK),
    # ?api_key=...&token=... in URLs and access-log paths
    (re.compile(rf"([?&;](?:{_NAMES})=)[^&;\s\"'#]*", re.IGNORECASE), r"\1" + MASK),
    # api_key=... token=... in messages (key=value)
    (re.compile(rf"(\b(?:{_NAMES})=[\"']?)(?!\[redacted\])[^\"'\s,;&}})]+", re.IGNORECASE), r"\1" + MASK),
    # "api_key": "..." and 'token': '...' in JSON and reprs
    (
        re.compile(rf"([\"'](?:{_NAMES})[\"']\s*:\s*[\"']?)(?!\[redacted\])[^\"'\s,;}}]+", re.IGNORECASE),
        r"\1" + MASK,
    ),
)

_TRACEBACKS = logging.Formatter()
_lock = threading.Lock()
_secrets: set[str] = set()
_known: re.Pattern[str] | None = None
_installed = False


def register_secrets(values: Iterable[object]) -> None:
    """Mask these values (the strings among them, long enough to be secrets) wherever they appear."""
    global _known
    with _lock:
        _secrets.update(value for value in values if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS)
        if _secrets:
            alternatives = sorted(_secrets, key=len, reverse=True)
            _known = re.compile("|".join(re.escape(value) for value in alternatives))


def redact(text: str) -> str:
    """`text` with every secret masked."""
    known = _known
    if known is not None:
        text = known.sub(MASK, text)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _redact_record(record: logging.LogRecord) -> None:
    if record.name == ACCESS_LOGGER and isinstance(record.args, tuple):
        # uvicorn's access formatter unpacks the arguments (client, method, path, version, status)
        record.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in record.args)
    else:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a logging call with the wrong arguments: logging reports it itself
            return
        masked = redact(message)
        if masked != message:  # the whole line, merged: a secret split between template and arguments goes too
            record.msg, record.args = masked, ()
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        # a traceback's lines (an exception's message, a URL in it) are formatted here, masked
        record.exc_text = redact(_TRACEBACKS.formatException(record.exc_info))


def install() -> None:
    """Mask secrets in every log record made from now on in this process (once; later calls do nothing)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        make_record = logging.getLogRecordFactory()

        def redacting_factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            _redact_record(record)
            return record

        logging.setLogRecordFactory(redacting_factory)
