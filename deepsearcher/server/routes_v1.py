"""The v1 API: background loads with job status, streaming queries, collection management.

POST   /v1/documents                 multipart files + form `collection`, `description` → 202 {job_id}
POST   /v1/load                      {inputs, collection?, description?, force_new_collection?, max_depth?,
                                     max_pages?} → 202 {job_id}
GET    /v1/jobs/{id}                 the job: status, progress, results, error
POST   /v1/jobs/{id}/resume          run an interrupted job again → 202
GET    /v1/jobs                      recent jobs (those of the key's collections)
POST   /v1/query                     {question, agent, max_iter?, collections?, max_tokens?, timeout?, options?}
                                     → QueryResult (or SSE)
POST   /v1/search                    {query, collections?, top_k?} → {query, collections, results}
GET    /v1/collections               [{name, description, dim, embedding_model, sources}]
GET    /v1/collections/{name}        {name, description, dim, embedding_model, sources}
DELETE /v1/collections/{name}
GET    /v1/collections/{name}/sources  [{reference, chunks}]
DELETE /v1/sources                   {collection, reference} → {deleted}
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Message, Receive

from deepsearcher.app import collections, loading, querying, searching, web_cache
from deepsearcher.server import services
from deepsearcher.server.auth import Principal, require_principal
from deepsearcher.server.errors import APIError, JSONSafeResponse, SafeRoute
from deepsearcher.server.jobs import (
    Job,
    JobNotResumable,
    remove_dir,
    upload_reference,
)
from deepsearcher.server.limits import Name, PathText
from deepsearcher.server.sse import SSE_HEADERS, stream_agent_run, wants_event_stream
from deepsearcher.server.state import ServerState
from deepsearcher.types.errors import ProviderError

router = APIRouter(
    prefix="/v1",
    tags=["v1"],
    route_class=SafeRoute,
    dependencies=[Depends(require_principal)],
)

MULTIPART_OVERHEAD = 1024 * 1024  # form fields and part headers on top of the files themselves
COPY_CHUNK = 1024 * 1024


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size} bytes"


def _accepted(job: Job) -> JSONSafeResponse:
    return JSONSafeResponse(
        {
            "job_id": job.id,
            "status": job.status,
            "collection": job.collection,
            "status_url": f"/v1/jobs/{job.id}",
        },
        status_code=202,
        headers={"Location": f"/v1/jobs/{job.id}"},
    )


# ---------------------------------------------------------------------- uploads


def _limited_receive(receive: Receive, limit: int, message: str) -> Receive:
    """`receive` that stops a request body growing past `limit` bytes (chunked uploads too)."""
    seen = 0

    async def limited() -> Message:
        nonlocal seen
        event = await receive()
        if event.get("type") == "http.request":
            seen += len(event.get("body", b""))
            if seen > limit:
                raise APIError(413, message)
        return event

    return limited


def safe_filename(name: str | None) -> str:
    """The last component of an uploaded file's name, refused when empty or odd."""
    base = (name or "").replace("\\", "/").split("/")[-1].strip()
    if not base or base in (".", "..") or any(ord(char) < 32 for char in base):
        raise APIError(
            400,
            f"Uploaded file name {name!r} is not usable: give each file a plain name like 'report.pdf'.",
        )
    if len(base.encode("utf-8")) > 255:
        raise APIError(400, f"Uploaded file name '{base[:40]}…' is longer than 255 bytes.")
    return base


def _save_uploads(files: list[tuple[str, UploadFile]], folder: Path, max_bytes: int) -> list[tuple[str, Path]]:
    """Copy the uploads into `folder` under their own names (blocking)."""
    folder.mkdir(parents=True, exist_ok=True)
    saved: list[tuple[str, Path]] = []
    for filename, upload in files:
        target = folder / filename
        written = 0
        upload.file.seek(0)
        with open(target, "wb") as out:
            while chunk := upload.file.read(COPY_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise APIError(
                        413,
                        f"File '{filename}' is larger than the limit of {_mb(max_bytes)} per file "
                        "(server.max_upload_bytes).",
                    )
                out.write(chunk)
        saved.append((filename, target))
    return saved


async def _read_upload_form(request: Request, state: ServerState) -> FormData:
    settings = state.settings
    total = settings.max_upload_bytes * settings.max_upload_files + MULTIPART_OVERHEAD
    too_large = (
        f"The upload is larger than the server accepts ({settings.max_upload_files} files of at most "
        f"{_mb(settings.max_upload_bytes)} each)."
    )
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > total:
        raise APIError(413, too_large)
    content_type = request.headers.get("content-type", "")
    if not content_type.lower().startswith("multipart/form-data"):
        raise APIError(
            415,
            "Upload files as multipart/form-data: one or more 'files' parts and a 'collection' field.",
        )
    limited = Request(request.scope, receive=_limited_receive(request.receive, total, too_large))
    try:
        return await limited.form(max_files=settings.max_upload_files, max_fields=50)
    except StarletteHTTPException as exc:
        if "Too many files" in str(exc.detail):
            raise APIError(
                413,
                f"Too many files in one upload: at most {settings.max_upload_files} (server.max_upload_files).",
            ) from None
        raise APIError(400, f"Cannot read the multipart upload: {exc.detail}") from None


_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["files"],
                    "properties": {
                        "files": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": "One or more files (.txt .md .pdf .json .jsonl .html .docx .csv).",
                        },
                        "collection": {
                            "type": "string",
                            "description": "Target collection (default: the configured default).",
                        },
                        "description": {
                            "type": "string",
                            "description": "What the collection holds (the router reads it).",
                        },
                    },
                }
            }
        },
    }
}


@router.post(
    "/documents",
    status_code=202,
    summary="Upload files; they are loaded by a background job.",
    openapi_extra=_UPLOAD_BODY,
)
async def upload_documents(request: Request, principal: Principal = Depends(require_principal)) -> JSONSafeResponse:
    state = services.server_state(request)
    settings = state.settings
    form = await _read_upload_form(request, state)
    try:
        collection_field = form.get("collection")
        description_field = form.get("description")
        collection = services.target_collection(
            state, principal, collection_field if isinstance(collection_field, str) else None
        )
        description = description_field if isinstance(description_field, str) else None
        uploads = [(key, value) for key, value in form.multi_items() if isinstance(value, UploadFile)]
        if not uploads:
            raise APIError(
                400,
                "No file in the upload: send one or more files as multipart parts named 'files'.",
            )
        if len(uploads) > settings.max_upload_files:
            raise APIError(
                413,
                f"Too many files in one upload: {len(uploads)}, at most {settings.max_upload_files} "
                "(server.max_upload_files).",
            )
        named: list[tuple[str, UploadFile]] = []
        seen: set[str] = set()
        for _, upload in uploads:
            filename = safe_filename(upload.filename)
            if filename in seen:
                raise APIError(400, f"The file name '{filename}' appears twice in one upload.")
            seen.add(filename)
            if upload.size is not None and upload.size > settings.max_upload_bytes:
                raise APIError(
                    413,
                    f"File '{filename}' is larger than the limit of {_mb(settings.max_upload_bytes)} per "
                    "file (server.max_upload_bytes).",
                )
            named.append((filename, upload))
        folder = state.upload_dir() / uuid.uuid4().hex
        try:
            saved = await services.in_thread(_save_uploads, named, folder, settings.max_upload_bytes)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    finally:
        await form.close()

    spec = services.upload_spec(folder, saved, description)
    inputs = [upload_reference(collection, filename) for filename, _ in saved]
    job = state.job_manager().submit(
        "upload",
        collection,
        inputs,
        services.upload_work(state, collection, spec),
        owner=principal.label,
        cleanup=remove_dir(folder),
        spec=spec,  # the staged files stay until the job is done, so a job killed with the server resumes
    )
    return _accepted(job)


# ---------------------------------------------------------------------- server-side loads


@router.post("/load", status_code=202, summary="Load server paths and URLs in a background job.")
async def load(
    body: loading.LoadRequest,
    request: Request,
    principal: Principal = Depends(require_principal),
) -> JSONSafeResponse:
    state = services.server_state(request)
    plan = await services.in_thread(services.plan_load, state, principal, body)  # resolves paths: blocks
    job = services.submit_load(state, principal, "load", plan)
    return _accepted(job)


# ---------------------------------------------------------------------- jobs


@router.get("/jobs/{job_id}", summary="Status, progress and results of a load job.")
async def get_job(job_id: str, request: Request, principal: Principal = Depends(require_principal)) -> JSONSafeResponse:
    manager = services.server_state(request).job_manager()
    job = manager.get(job_id)
    if job is None:
        raise APIError(404, f"No job '{job_id}'.")
    if not principal.may_use(str(job["collection"])):
        raise APIError(403, f"This API key may not use collection '{job['collection']}'.")
    return JSONSafeResponse(job)


@router.post(
    "/jobs/{job_id}/resume",
    status_code=202,
    summary="Run an interrupted load job again (what is stored is kept).",
)
async def resume_job(
    job_id: str, request: Request, principal: Principal = Depends(require_principal)
) -> JSONSafeResponse:
    state = services.server_state(request)
    manager = state.job_manager()
    job = manager.get(job_id)
    if job is None:
        raise APIError(404, f"No job '{job_id}'.")
    collection = str(job["collection"])
    if not principal.may_use(collection):
        raise APIError(403, f"This API key may not use collection '{collection}'.")
    spec = manager.spec(job_id)
    if spec is None:
        raise APIError(409, f"Job {job_id} cannot be resumed: it recorded nothing to run again; load it anew.")
    try:
        if spec.get("kind") == "upload":
            missing = services.missing_uploads(spec)
            if missing:
                raise APIError(
                    409,
                    f"Job {job_id} cannot be resumed: its staged files are gone ({', '.join(missing[:3])}): "
                    "upload the files again.",
                )
            work, cleanup = services.upload_work(state, collection, spec), remove_dir(Path(str(spec["folder"])))
        else:
            work, cleanup = services.load_work(state, collection, spec, resuming=True), None
        resumed = manager.resume(job_id, work, cleanup)
    except JobNotResumable as exc:
        raise APIError(409, str(exc)) from None
    return _accepted(resumed)


@router.get("/jobs", summary="Recent load jobs, newest first.")
async def list_jobs(request: Request, principal: Principal = Depends(require_principal)) -> JSONSafeResponse:
    manager = services.server_state(request).job_manager()
    return JSONSafeResponse(manager.list(principal.authorized_collections))


# ---------------------------------------------------------------------- query


T = TypeVar("T")


async def _noting_llm(state: ServerState, run: Awaitable[T]) -> T:
    """Await a query, keeping its LLM failure (or success) for /health, so the page can say the LLM is down."""
    try:
        result = await run
    except ProviderError as exc:
        if exc.error_kind == "llm":
            state.llm_error = str(exc)
        raise
    state.llm_error = None
    return result


@router.post(
    "/query",
    summary="Answer a question; JSON, or Server-Sent Events with Accept: text/event-stream.",
    responses={
        200: {
            "content": {
                "application/json": {},
                "text/event-stream": {"description": "event: step | token | result | error"},
            }
        }
    },
)
async def query(
    body: querying.QueryRequest,
    request: Request,
    principal: Principal = Depends(require_principal),
) -> Response:
    state = services.server_state(request)
    plan = await services.plan_query(state, principal, body)
    if wants_event_stream(request.headers.get("accept")):
        frames = stream_agent_run(lambda on_event: _noting_llm(state, querying.ask(plan, on_event=on_event)))
        return StreamingResponse(frames, media_type="text/event-stream", headers=SSE_HEADERS)
    result = await _noting_llm(state, querying.ask(plan))
    return JSONSafeResponse(result.to_dict())


# ---------------------------------------------------------------------- search


@router.post("/search", summary="Retrieval only, no LLM: the chunks that best match a query.")
async def search(
    body: searching.SearchRequest, request: Request, principal: Principal = Depends(require_principal)
) -> JSONSafeResponse:
    collections = principal.require_all(body.collections) if body.collections else None
    response = await services.in_thread(
        searching.search,
        services.components(request),
        body.model_copy(update={"collections": collections}),
        principal.authorized_collections,
    )
    return JSONSafeResponse(response.to_dict())


# ---------------------------------------------------------------------- collections and sources


@router.get(
    "/collections",
    summary="Collections this key may use, with their number of sources.",
)
async def list_collections(request: Request, principal: Principal = Depends(require_principal)) -> JSONSafeResponse:
    rows = await services.in_thread(collections.list_collections, services.components(request), principal.may_use)
    return JSONSafeResponse([row.to_dict() for row in rows])


@router.get("/web-cache", summary="Web pages fetched for questions asked with web on (URL, chunks, fetch time).")
async def list_web_cache(request: Request, principal: Principal = Depends(require_principal)) -> JSONSafeResponse:
    pages = await services.in_thread(web_cache.list_web_cache, services.components(request))
    return JSONSafeResponse([page.to_dict() for page in pages])


@router.delete("/web-cache", summary="Clear the web cache (a key limited to some collections may not).")
async def clear_web_cache(request: Request, principal: Principal = Depends(require_principal)) -> JSONSafeResponse:
    if principal.authorized_collections is not None:  # the cache serves every key's questions
        raise APIError(403, "This API key is limited to some collections and may not clear the web cache.")
    removed = await services.in_thread(web_cache.clear_web_cache, services.components(request))
    return JSONSafeResponse({"removed": removed})


@router.get("/collections/{name}", summary="One collection: description, embedding model, sources.")
async def describe_collection(
    name: str, request: Request, principal: Principal = Depends(require_principal)
) -> JSONSafeResponse:
    name = principal.require(name)
    summary = await services.in_thread(
        collections.describe_collection, services.components(request), name, principal.may_use
    )
    return JSONSafeResponse(summary.to_dict())


@router.delete("/collections/{name}", summary="Drop a collection and everything in it.")
async def drop_collection(
    name: str, request: Request, principal: Principal = Depends(require_principal)
) -> JSONSafeResponse:
    name = principal.require(name)
    state = services.server_state(request)
    await services.in_thread(
        collections.drop_collection, state.current(), name, principal.may_use, state.job_manager().write_lock
    )
    return JSONSafeResponse({"deleted": name})


@router.get(
    "/collections/{name}/sources",
    summary="The sources (files, pages, uploads) in a collection.",
)
async def list_sources(
    name: str, request: Request, principal: Principal = Depends(require_principal)
) -> JSONSafeResponse:
    name = principal.require(name)
    rows = await services.in_thread(collections.list_sources, services.components(request), name, principal.may_use)
    return JSONSafeResponse([row.to_dict() for row in rows])


class DeleteSourceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    collection: Name
    reference: PathText = Field(min_length=1, description="As listed by GET /v1/collections/{name}/sources.")


@router.delete("/sources", summary="Remove one source's chunks from a collection.")
async def delete_source(
    body: DeleteSourceRequest,
    request: Request,
    principal: Principal = Depends(require_principal),
) -> JSONSafeResponse:
    name = principal.require(body.collection)
    state = services.server_state(request)
    removed = await services.in_thread(
        collections.delete_source,
        state.current(),
        name,
        body.reference,
        principal.may_use,
        state.job_manager().write_lock,
    )
    if removed == 0:
        raise APIError(
            404,
            f"No source '{body.reference}' in collection '{name}' (see GET /v1/collections/{name}/sources).",
        )
    return JSONSafeResponse({"deleted": removed})
