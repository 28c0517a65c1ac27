"""Every error leaves the server as JSON `{"error": "<what failed>"}` with a fitting status.

Stack traces stay in the server log: an unexpected exception answers 500 with a generic
message and an error id that also appears next to the traceback in the log.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from deepsearcher.types.errors import DeepSearcherError, classify

logger = logging.getLogger("deepsearcher.server")


class APIError(DeepSearcherError):
    """An HTTP-only refusal (bad credentials, upload too large) with its own status and headers."""

    error_kind = "http"

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = self.http_status = status
        self.message = message
        self.headers = headers


class JSONSafeResponse(JSONResponse):
    """JSON whose odd values (paths, dates in metadata) become strings instead of a 500."""

    def render(self, content: object) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str, separators=(",", ":")).encode("utf-8")


def error_response(status: int, error: str, headers: dict[str, str] | None = None, **extra: object) -> JSONResponse:
    """`{"error": error, **extra}` with `status`."""
    return JSONSafeResponse({"error": error, **extra}, status_code=status, headers=headers)


def status_for(exc: DeepSearcherError) -> int:
    """The HTTP status of a DeepSearcher error: the one carried by its kind (types/errors.py)."""
    return classify(exc).http_status


def internal_error(exc: BaseException, request: Request | None = None) -> JSONResponse:
    """Log the traceback under a fresh id and answer with that id only."""
    error_id = uuid.uuid4().hex[:12]
    where = f"{request.method} {request.url.path}" if request is not None else "request"
    logger.error(
        "Unexpected error %s in %s",
        error_id,
        where,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return error_response(
        500,
        f"Internal server error (error id {error_id}); the details are in the server log.",
        error_id=error_id,
    )


def _field(loc: tuple[int | str, ...]) -> str:
    parts = [str(part) for part in loc if part not in ("body", "query", "path", "header")]
    return ".".join(parts) or "request body"


#: A 422 names this many problems (and counts the rest): a request of a thousand bad items must
#: not get an answer larger than itself.
MAX_PROBLEMS_LISTED = 5
#: Characters of one problem kept in a 422 (a field path or message can be long).
MAX_PROBLEM_CHARS = 300


def validation_message(exc: RequestValidationError) -> str:
    problems: list[str] = []
    for error in exc.errors():
        message = str(error.get("msg", "invalid value"))
        if error.get("type") == "json_invalid":
            problem = "the request body is not valid JSON"
        else:
            problem = f"{_field(tuple(error.get('loc', ())))}: {message}"
        if len(problem) > MAX_PROBLEM_CHARS:
            problem = problem[: MAX_PROBLEM_CHARS - 1] + "…"
        if problem not in problems:
            problems.append(problem)
    if not problems:
        return "Invalid request."
    listed = "; ".join(problems[:MAX_PROBLEMS_LISTED])
    if len(problems) > MAX_PROBLEMS_LISTED:
        listed += f"; and {len(problems) - MAX_PROBLEMS_LISTED} more problem(s)"
    return "Invalid request: " + listed


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DeepSearcherError)
    async def _deepsearcher_error(request: Request, exc: DeepSearcherError) -> JSONResponse:
        info = classify(exc)
        if info.http_status >= 500:
            logger.warning("%s %s failed: %s", request.method, request.url.path, exc)
        return error_response(
            info.http_status,
            info.message,
            getattr(exc, "headers", None),
            kind=info.kind,
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail, default=str)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"Not found: {request.method} {request.url.path} (the API is listed at /docs)."
        elif exc.status_code == 405:
            detail = f"Method {request.method} is not allowed on {request.url.path} (see /docs)."
        return error_response(exc.status_code, detail, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return internal_error(exc, request)


class SafeRoute(APIRoute):
    """Routes whose unexpected exceptions become the logged, generic 500 right away.

    (Starlette's catch-all handler answers too, but re-raises afterwards; handling it in
    the route keeps the traceback logged once, under the error id.)
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def safe_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except (DeepSearcherError, RequestValidationError, StarletteHTTPException):
                raise
            except Exception as exc:  # noqa: BLE001 - the catch-all the module docstring describes
                return internal_error(exc, request)

        return safe_handler
