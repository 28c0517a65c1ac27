"""What the routes do, shared by the DeepSearcher-compatible and the v1 routes.

Store calls block (Milvus, file reads, embeddings), so routes call them through
`in_thread` and the event loop keeps serving other requests meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from typing_extensions import ParamSpec

from deepsearcher.app import Components, loading, querying
from deepsearcher.app.loading import LoadPlan, LoadRequest
from deepsearcher.app.querying import QueryPlan, QueryRequest
from deepsearcher.offline_loading.pipeline import ProgressCallback
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.server.auth import Principal
from deepsearcher.server.jobs import Job, JobSpec, iter_upload_sources
from deepsearcher.server.paths import NO_ROOTS
from deepsearcher.server.state import ServerState

T = TypeVar("T")
P = ParamSpec("P")


def server_state(request: Request) -> ServerState:
    return request.app.state.deepsearcher


async def in_thread(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await run_in_threadpool(function, *args, **kwargs)


def components(request: Request) -> Components:
    """The app's current Components (one reference, swapped whole by /set-provider-config/)."""
    return server_state(request).current()


def target_collection(state: ServerState, principal: Principal, name: str | None) -> str:
    """The named collection (or the configured default), checked against the key."""
    if name is None or not name.strip():
        name = state.current().vector_db.default_collection
    return principal.require(name)


# ---------------------------------------------------------------------- loading


def plan_load(state: ServerState, principal: Principal, request: LoadRequest) -> LoadPlan:
    """The load service's checks (inputs, path rules under server.allowed_roots, crawl bounds, a
    crawler for URLs) on a request whose collection the key may write, before any job exists."""
    collection = target_collection(state, principal, request.collection)
    return loading.plan_load(
        state.current(),
        request.model_copy(update={"collection": collection}),
        list(state.settings.allowed_roots),
        NO_ROOTS,
    )


def submit_load(state: ServerState, principal: Principal, kind: str, plan: LoadPlan) -> Job:
    """Queue a job running the load service over `plan`, recording its request whole (`job_spec`)
    so a resumed job is the same request planned again; the job manager holds the collection's lock."""
    spec = job_spec(plan.request.model_copy(update={"collection": plan.collection}))
    work = load_work(state, plan.collection, spec)
    return state.job_manager().submit(kind, plan.collection, plan.inputs, work, owner=principal.label, spec=spec)


def job_spec(request: LoadRequest) -> JobSpec:
    """What a load job records to run again: its request, serialised by the model itself (every
    field, so a new one cannot be dropped on the way, as `refresh` once was)."""
    return {"kind": "load", "request": request.model_dump(mode="json")}


def request_from_spec(collection: str, spec: JobSpec, resuming: bool = False) -> LoadRequest:
    """The LoadRequest a job recorded, validated again by the model; a resumed job never drops the
    collection again. A job recorded before requests were (field by field) is read once into one."""
    recorded = spec.get("request")
    values = dict(recorded) if isinstance(recorded, dict) else _legacy_request_fields(spec)
    values["collection"] = collection
    if resuming:
        values["force_new_collection"] = False
    return LoadRequest.create(**values)


def _legacy_request_fields(spec: JobSpec) -> dict[str, object]:
    """A job spec as servers wrote it before recording the request whole (a job interrupted by the upgrade)."""
    recorded_crawl = spec.get("crawl")
    crawl = dict(recorded_crawl) if isinstance(recorded_crawl, dict) else {}
    crawl.pop("validators", None)  # found again by planning (a refresh load)
    return {
        "inputs": _strings(spec.get("paths")) + _strings(spec.get("urls")),
        "description": spec.get("description"),
        "force_new_collection": bool(spec.get("force_new_collection")),
        "batch_size": spec.get("batch_size"),
        "max_depth": crawl.pop("max_depth", 0),
        "max_pages": crawl.pop("max_pages", None),
        "crawl_options": crawl,
        "sync": bool(spec.get("sync")),
        "refresh": bool(spec.get("refresh")),
    }


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def load_work(
    state: ServerState, collection: str, spec: JobSpec, resuming: bool = False
) -> Callable[[ProgressCallback], LoadSummary]:
    """The work of a load job from its recorded spec, planned through the same checks as a new
    request (paths under today's server.allowed_roots, crawl bounds, a crawler for URLs)."""
    plan = loading.plan_load(
        state.current(),
        request_from_spec(collection, spec, resuming),
        list(state.settings.allowed_roots),
        NO_ROOTS,
    )

    def work(on_progress: ProgressCallback) -> LoadSummary:
        return loading.run_load(state.current(), plan, on_progress)

    return work


def upload_spec(folder: Path, saved: list[tuple[str, Path]], description: str | None) -> JobSpec:
    """What an upload job records to run again: its staging folder and files, kept until it is done."""
    return {
        "kind": "upload",
        "folder": str(folder),
        "files": [[filename, str(path)] for filename, path in saved],
        "description": description,
    }


def staged_uploads(spec: JobSpec) -> list[tuple[str, Path]]:
    """An upload job's staged files (name, path), as `upload_spec` recorded them."""
    files = spec.get("files")
    return [(str(name), Path(str(path))) for name, path in files] if isinstance(files, list) else []


def missing_uploads(spec: JobSpec) -> list[str]:
    """The staged files of an upload job that are no longer there."""
    return [filename for filename, path in staged_uploads(spec) if not path.is_file()]


def upload_work(state: ServerState, collection: str, spec: JobSpec) -> Callable[[ProgressCallback], LoadSummary]:
    """The work of an upload job: its staged files, each under `upload://<collection>/<name>`."""
    saved = staged_uploads(spec)

    def work(on_progress: ProgressCallback) -> LoadSummary:
        components = state.current()
        return loading.pipeline_for(components, on_progress=on_progress).run(
            iter_upload_sources(saved, collection, components.file_loader),
            collection_name=collection,
            collection_description=str(spec.get("description") or ""),
        )

    return work


# ---------------------------------------------------------------------- querying


NO_LLM_HINT = "Configure one under provide_settings.llm in the config file given to `deepsearcher serve --config`."


async def plan_query(state: ServerState, principal: Principal, request: QueryRequest) -> QueryPlan:
    """The query service's checks and defaults for this key: collections it may not use are 403,
    missing ones 404 (listing those it may see), no LLM 503; blocking store calls run in a thread."""
    if request.collections:
        request = request.model_copy(update={"collections": principal.require_all(request.collections)})
    return await in_thread(
        querying.plan_query,
        state.current(),
        request,
        principal.authorized_collections,
        no_llm_hint=NO_LLM_HINT,
    )
