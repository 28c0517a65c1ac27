"""DeepSearcher's original endpoints, with its request and response shapes.

    POST /set-provider-config/ {feature, provider, config}            → {"message", "provider", "config"}
    POST /load-files/    {paths, collection_name?, collection_description?, batch_size?} → {"message"}
    POST /load-website/  {urls, collection_name?, collection_description?, batch_size?}  → {"message"}
    GET  /query/?original_query=…&max_iter=…                                           → {"result", "consume_token"}

Loads answer when they are done (as DeepSearcher's did) but run as jobs in worker
threads, serialized per collection like the v1 jobs. 200: everything loaded; 207:
some sources failed (the message names them); 422: nothing could be loaded; the
response also carries `summary` and `job_id`.

/set-provider-config/ rebuilds the components (as DeepSearcher's did), so it is an
admin action: with API keys it needs a key without a collections limit; without keys
only a loopback listener accepts it. The new settings take effect only if every
component builds; the answer's `config` hides credential-like values.
"""

from __future__ import annotations

import asyncio
import copy
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from deepsearcher.app import loading, querying
from deepsearcher.server import services
from deepsearcher.server.auth import Principal, require_principal
from deepsearcher.server.errors import (
    APIError,
    JSONSafeResponse,
    SafeRoute,
    error_response,
)
from deepsearcher.server.limits import MAX_INPUTS, Description, Name, PathText, UrlText
from deepsearcher.server.paths import check_url
from deepsearcher.server.settings import is_loopback
from deepsearcher.types.errors import DeepSearcherError

if TYPE_CHECKING:
    from deepsearcher.server.state import ServerState

SECRET_MARKERS = ("key", "token", "secret", "password", "credential")
_switching = asyncio.Lock()

router = APIRouter(
    tags=["DeepSearcher-compatible"],
    route_class=SafeRoute,
    dependencies=[Depends(require_principal)],
)


class LoadFilesRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    paths: PathText | list[PathText] = Field(
        description="Files or folders on the server, under server.allowed_roots.",
        examples=[["/srv/docs/handbook.pdf"]],
    )
    collection_name: Name | None = Field(None, description="Target collection (default: the configured default).")
    collection_description: Description | None = Field(
        None, description="What the collection holds (the router reads it)."
    )
    batch_size: int | None = Field(None, ge=1, le=4096, description="Chunks embedded per batch.")


class LoadWebsiteRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    urls: UrlText | list[UrlText] = Field(description="http(s) URLs to crawl.", examples=[["https://example.com/docs"]])
    collection_name: Name | None = None
    collection_description: Description | None = None
    batch_size: int | None = Field(None, ge=1, le=4096)


class ProviderConfigRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    feature: Name = Field(
        description="llm, embedding, file_loader, web_crawler or vector_db.",
        examples=["llm"],
    )
    provider: Name = Field(
        description="A provider name (see `deepsearcher providers`).",
        examples=["OpenAI"],
    )
    config: dict[str, Any] = Field(
        default_factory=dict,
        max_length=100,
        description="The provider's settings.",
        examples=[{"model": "gpt-4o-mini"}],
    )


def redacted(value: object) -> object:
    """`value` with every credential-like entry replaced, for echoing settings back: keys named like
    secrets, and in URLs a password (`http://user:pass@host`) or a secret-named query parameter."""
    if isinstance(value, dict):
        return {k: "***" if _secret_name(k) else redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(item) for item in value]
    if isinstance(value, str) and "://" in value:
        return _redacted_url(value)
    return value


def _secret_name(name: object) -> bool:
    return any(marker in str(name).lower() for marker in SECRET_MARKERS)


def _redacted_url(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = urlencode(
        [(key, "***" if _secret_name(key) else item) for key, item in parse_qsl(parts.query, keep_blank_values=True)],
        safe="*",
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query if parts.query else ""))


def _require_admin(request: Request, principal: Principal) -> None:
    settings = services.server_state(request).settings
    if settings.auth_enabled:
        if principal.collections is not None:
            raise APIError(
                403,
                "Changing providers needs an admin key (one without a collections limit).",
            )
        return
    listener = request.scope.get("server")
    if not listener or not is_loopback(str(listener[0])):
        raise APIError(
            403,
            "Changing providers without API keys is allowed only on a loopback listener; add server.api_keys.",
        )


def _busy(state: ServerState) -> bool:
    return any(job["status"] in ("queued", "running") for job in state.job_manager().list())


@router.post("/set-provider-config/", summary="Switch one feature to another provider (admin).")
async def set_provider_config(
    body: ProviderConfigRequest,
    request: Request,
    principal: Principal = Depends(require_principal),
) -> dict:
    _require_admin(request, principal)
    state = services.server_state(request)
    async with _switching:
        if _busy(state):
            raise APIError(
                409,
                "Load jobs are running: switch providers when they have finished (GET /v1/jobs).",
            )
        candidate = copy.deepcopy(state.config)
        candidate.set_provider_config(body.feature, body.provider, body.config)
        try:
            built = await services.in_thread(state.build, candidate)
            optional_error = {"llm": built.llm_error, "web_crawler": built.web_crawler_error}.get(body.feature)
            if optional_error is not None:  # asked for explicitly: its failure is this request's failure
                raise optional_error
        except (DeepSearcherError, OSError) as exc:
            # back to what worked: the builder reuses every part of the old settings it still has
            state.components = await services.in_thread(state.build, state.config)
            raise APIError(400, f"Failed to set provider config: {exc}") from exc
        state.config, state.components = candidate, built
    return {
        "message": "Provider config set successfully",
        "provider": body.provider,
        "config": redacted(body.config),
    }


def _as_list(value: str | list[str]) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    if len(items) > MAX_INPUTS:
        raise APIError(400, f"{len(items)} inputs in one request; at most {MAX_INPUTS}: name their folder instead.")
    return items


def _loaded_response(job: dict, what: str) -> JSONResponse:
    results = job["results"]
    collection = job["collection"]
    if job["status"] == "failed" and not results["failed"]:  # the job itself failed (store, crawler, ...)
        return error_response(500, f"Loading into '{collection}' failed: {job['error']}", job_id=job["id"])
    counts = (
        f"{len(results['loaded'])} new, {len(results['replaced'])} replaced, "
        f"{len(results['skipped_unchanged'])} unchanged"
    )
    if job["status"] == "succeeded":
        message = f"{what} loaded successfully into '{collection}' ({counts}, {results['chunks_inserted']} chunks)."
        return JSONSafeResponse({"message": message, "summary": results, "job_id": job["id"]})
    failures = "; ".join(f"{failure['source']}: {failure['reason']}" for failure in results["failed"])
    if job["status"] == "partial":
        message = f"{what} partly loaded into '{collection}' ({counts}); failed: {failures}"
        return JSONSafeResponse(
            {"message": message, "summary": results, "job_id": job["id"]},
            status_code=207,
        )
    return error_response(
        422,
        f"Nothing was loaded into '{collection}'; failed: {failures}",
        message=f"{what} could not be loaded.",
        summary=results,
        job_id=job["id"],
    )


@router.post(
    "/load-files/",
    summary="Load server-side files or folders and wait until they are in.",
)
async def load_files(
    body: LoadFilesRequest,
    request: Request,
    principal: Principal = Depends(require_principal),
) -> JSONResponse:
    state = services.server_state(request)
    given = _as_list(body.paths)
    if not given:
        return error_response(400, 'No path given: send {"paths": ["/path/on/the/server"]}.')
    load_request = loading.LoadRequest.create(
        inputs=given,
        collection=body.collection_name,
        description=body.collection_description,
        batch_size=body.batch_size,
    )
    plan = await services.in_thread(services.plan_load, state, principal, load_request)  # resolves paths: blocks
    if plan.urls:
        return error_response(400, "/load-files/ takes server paths; load URLs with /load-website/.")
    job = services.submit_load(state, principal, "load-files", plan)
    return _loaded_response(await state.job_manager().wait(job.id), "Files")


@router.post(
    "/load-website/",
    summary="Crawl URLs and load the pages, waiting until they are in.",
)
async def load_website(
    body: LoadWebsiteRequest,
    request: Request,
    principal: Principal = Depends(require_principal),
) -> JSONResponse:
    state = services.server_state(request)
    urls = [check_url(url) for url in _as_list(body.urls)]
    if not urls:
        return error_response(400, 'No URL given: send {"urls": ["https://..."]}.')
    load_request = loading.LoadRequest.create(
        inputs=urls,
        collection=body.collection_name,
        description=body.collection_description,
        batch_size=body.batch_size,
    )
    plan = await services.in_thread(services.plan_load, state, principal, load_request)
    job = services.submit_load(state, principal, "load-website", plan)
    return _loaded_response(await state.job_manager().wait(job.id), "Website")


@router.get(
    "/query/",
    summary="Answer a question with the auto-routed agent (DeepSearcher's shape).",
)
async def perform_query(
    request: Request,
    original_query: str = Query(..., min_length=1, description="The question."),
    max_iter: int | None = Query(None, description="Research rounds at most (default and bounds: the agents')."),
    principal: Principal = Depends(require_principal),
) -> dict:
    query_request = querying.QueryRequest.create(question=original_query, agent="auto", max_iter=max_iter)
    plan = await services.plan_query(services.server_state(request), principal, query_request)
    result = await querying.ask(plan)
    return {"result": result.answer, "consume_token": result.total_tokens}
