"""Bounds on what one request may carry, so no request can hold the server for long.

`BodyLimit` refuses a request body over `server.max_request_bytes` (uploads, which have their
own per-file limits, excepted) before any of it is parsed: 413, read no further. A JSON body is
then checked for nesting (`bounded_json.MAX_DEPTH`) before FastAPI parses it: 400 naming the
limit, instead of the decoder recursing once per bracket. The field caps
(`Text`, `Name`, `PathText`...) go on the request models, so an oversize field is a 422 naming
the field, never echoed back and never resolved as a path.
"""

from __future__ import annotations

import json
from typing import Annotated

import anyio
from pydantic import Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deepsearcher.app.loading import MAX_INPUTS
from deepsearcher.app.path_rules import MAX_PATH_CHARS
from deepsearcher.server.settings import DEFAULT_MAX_REQUEST_BYTES
from deepsearcher.utils.bounded_json import InputLimitError, check_depth

#: Bodies larger than this are scanned for nesting in a worker thread (a 4 MB body of a million
#: small arrays takes about half a second to scan).
THREAD_SCAN_BYTES = 64 * 1024

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "MAX_INPUTS",
    "BodyLimit",
    "Description",
    "Name",
    "PathText",
    "UrlText",
]


Name = Annotated[str, Field(max_length=255)]
Description = Annotated[str, Field(max_length=10_000)]
PathText = Annotated[str, Field(max_length=MAX_PATH_CHARS)]
UrlText = Annotated[str, Field(max_length=2048)]


class BodyLimit:
    """Pure ASGI middleware: a non-multipart body larger than `limit` bytes is answered 413."""

    def __init__(self, app: ASGIApp, limit: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _is_multipart(scope):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await self._refuse(send)
            return
        seen = 0

        async def limited() -> Message:  # a chunked body, read as it comes: stopped where it passes the limit
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise StarletteHTTPException(413, self.message, headers={"Connection": "close"})
            return message

        if not _is_json(scope):
            await self.app(scope, limited, send)
            return
        try:
            received = await _whole_body(limited)
        except StarletteHTTPException:
            await self._refuse(send)
            return
        if received is None:
            return  # the client is gone: nobody to answer
        body, last = received
        try:
            if len(body) > THREAD_SCAN_BYTES:  # a long scan holds the GIL in slices, not the event loop whole
                await anyio.to_thread.run_sync(check_depth, body, "The request body")
            else:
                check_depth(body, "The request body")
        except InputLimitError as exc:
            await _answer(send, 400, str(exc))
            return
        replayed = False

        async def replay() -> Message:  # the body once, as it came; then whatever the client sends next
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {**last, "body": body, "more_body": False}

        await self.app(scope, replay, send)

    @property
    def message(self) -> str:
        return (
            f"The request body is larger than {self.limit} bytes (server.max_request_bytes); "
            "upload files with POST /v1/documents, or name fewer or shorter paths."
        )

    async def _refuse(self, send: Send) -> None:
        await _answer(send, 413, self.message)


async def _whole_body(receive: Receive) -> tuple[bytes, Message] | None:
    """The request body read to its end (`receive` enforces the size limit) and its last message;
    None when the client went away first."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts), message


async def _answer(send: Send, status: int, error: str) -> None:
    """A JSON error sent from the middleware itself, closing the connection."""
    body = json.dumps({"error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            # close: the rest of the body may be unread, so the connection cannot carry another request
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _is_json(scope: Scope) -> bool:
    media = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _is_multipart(scope: Scope) -> bool:
    return (_header(scope, b"content-type") or "").lower().startswith("multipart/form-data")


def _content_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    return int(value) if value is not None and value.isdigit() else None
