"""Bounds on what one request may carry, so no request can hold the server for long.

`BodyLimit` refuses a request body over `server.max_request_bytes` (uploads, which have their
own per-file limits, excepted) before any of it is parsed: 413, read no further. The field caps
(`Text`, `Name`, `PathText`...) go on the request models, so an oversize field is a 422 naming
the field, never echoed back and never resolved as a path.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deepsearcher.app.loading import MAX_INPUTS
from deepsearcher.app.path_rules import MAX_PATH_CHARS
from deepsearcher.server.settings import DEFAULT_MAX_REQUEST_BYTES

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

        await self.app(scope, limited, send)

    @property
    def message(self) -> str:
        return (
            f"The request body is larger than {self.limit} bytes (server.max_request_bytes); "
            "upload files with POST /v1/documents, or name fewer or shorter paths."
        )

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": self.message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                # close: the rest of the body is never read, so the connection cannot carry another request
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


def _is_multipart(scope: Scope) -> bool:
    return (_header(scope, b"content-type") or "").lower().startswith("multipart/form-data")


def _content_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    return int(value) if value is not None and value.isdigit() else None
