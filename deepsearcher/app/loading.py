"""The load use case, written once: what `deepsearcher load`, `POST /v1/load`, the
DeepSearcher-compatible load routes, MCP's `load` tool and `load_from_*` all run.

`plan_load` checks a request (inputs, URL schemes, path rules when the caller is remote,
crawl bounds, a crawler for URLs) before anything is read; `run_load` runs the ingestion
pipeline over a plan with the given components; `load` does both under the collection's
process-wide write lock. The REST API plans at request time and runs in a job (the job
manager holds the lock), so a bad request is refused before a job exists.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from deepsearcher.app.components import Components
from deepsearcher.app.locks import collection_lock
from deepsearcher.app.path_rules import (
    MAX_PATH_CHARS,
    NO_ROOTS,
    iter_allowed_file_entries,
    resolve_allowed,
)
from deepsearcher.app.requests import RequestModel, RequestName
from deepsearcher.loader.file_loader._budget import ParseBudget
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.loader.file_loader.text_detection import WithTextFiles
from deepsearcher.offline_loading.parse_worker import ProcessParser
from deepsearcher.offline_loading.pipeline import IngestionPipeline, ProgressCallback
from deepsearcher.offline_loading.sources import LoadedSource, iter_file_entries
from deepsearcher.offline_loading.summary import NOTHING_LOADED, LoadSummary
from deepsearcher.offline_loading.sync import (
    Fingerprinter,
    SyncPlan,
    apply_moves,
    folder_prefixes,
    plan_sync,
    remove_sources,
)
from deepsearcher.types.errors import BadInputError, NotReadyError
from deepsearcher.utils.names import safe_reference
from deepsearcher.vector_db.base import SourceRecord, normalize_collection_name

__all__ = [
    "LoadPlan",
    "LoadRequest",
    "changes_plan",
    "check_url",
    "load",
    "pipeline_for",
    "plan_load",
    "run_load",
    "split_inputs",
    "sync_changes",
]

#: Crawl depth a request may ask for (each level multiplies the pages fetched).
MAX_DEPTH = 10
#: Paths and URLs one request from a remote client (REST, MCP) may name: a folder names many files.
MAX_INPUTS = 1000
#: Pages one crawl may fetch at most.
MAX_PAGES = 10_000
#: An input (a path or a URL) as a request carries it.
InputText = Annotated[str, Field(max_length=MAX_PATH_CHARS)]


class LoadRequest(RequestModel):
    """What a front-end was asked to load; None means "the configured default". Written once: the
    CLI, MCP, DeepSearcher's `load_from_*` and REST (`POST /v1/load` validates its body against this
    very class) fill it, and a REST job records it (`model_dump`) and reads it back to resume."""

    inputs: list[InputText] = Field(
        default_factory=list,
        description="Files, folders (server paths under server.allowed_roots, over REST) and http(s) URLs "
        "(at least one, unless `refresh`).",
        examples=[["/srv/docs", "https://example.com/handbook"]],
    )
    collection: RequestName | None = Field(
        default=None, description="Target collection (default: the configured default)."
    )
    description: str | None = Field(
        default=None, max_length=10_000, description="What the collection holds (the router reads it)."
    )
    force_new_collection: bool = Field(default=False, description="Drop and recreate the collection first.")
    chunk_size: int | None = Field(default=None, ge=1, description="Characters per chunk (default: load_settings).")
    chunk_overlap: int | None = Field(default=None, ge=0, description="Characters shared by neighbouring chunks.")
    batch_size: int | None = Field(default=None, ge=1, le=4096, description="Chunks embedded per batch.")
    max_depth: int = Field(default=0, ge=0, le=MAX_DEPTH, description="Follow links this many levels from each URL.")
    max_pages: int | None = Field(default=None, ge=1, le=MAX_PAGES, description="Stop crawling after this many pages.")
    #: Other crawler arguments, passed through; a local caller's only (plan_load refuses them with roots).
    crawl_options: dict[str, object] = Field(default_factory=dict, max_length=50)
    text_extensions: list[RequestName] = Field(
        default_factory=list,
        max_length=100,
        description="More extensions to read as plain text (besides load_settings.text_extensions).",
    )
    text_key: RequestName | None = Field(default=None, description="The JSON / JSONL field holding each record's text.")
    sync: bool = Field(
        default=False,
        description="Also remove stored sources under the given folders that no longer exist there "
        "(without it they are only named in the summary, as `gone`).",
    )
    refresh: bool = Field(
        default=False,
        description="Also fetch the collection's stored web pages again, conditionally (ETag / Last-Modified): "
        "a page not modified is kept, a changed one replaced (as `deepsearcher load --refresh`).",
    )

    @field_validator("max_depth", mode="before")
    @classmethod
    def _no_depth_is_zero(cls, value: object) -> object:
        return 0 if value is None else value


@dataclass(frozen=True)
class LoadPlan:
    """A checked request: the collection, the paths (resolved when roots apply) and URLs."""

    request: LoadRequest
    collection: str
    paths: list[str | Path]
    urls: list[str]
    roots: list[Path] | None = None
    crawl: dict[str, object] = field(default_factory=dict)

    @property
    def inputs(self) -> list[str]:
        return [str(path) for path in self.paths] + self.urls


def check_url(url: str) -> str:
    """`url` stripped when it is an http(s) URL with a host; else BadInputError (400)."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise BadInputError(f"Only http and https URLs can be loaded, got '{url}'.")
    if not parts.hostname:
        raise BadInputError(f"The URL '{url}' has no host name.")
    return url.strip()


def split_inputs(
    inputs: Iterable[str], roots: list[Path] | None = None, no_roots: str = NO_ROOTS
) -> tuple[list[str | Path], list[str]]:
    """Paths and http(s) URLs; any bad one refuses the whole request.

    `roots` None: the caller loads its own machine (CLI, library), paths are kept as given.
    Otherwise (REST, MCP) each path must resolve under a root (PathRefusedError: 403 / 400).
    """
    paths: list[str | Path] = []
    urls: list[str] = []
    for item in inputs:
        if "://" in item:
            urls.append(check_url(item))
        elif roots is None:
            paths.append(item)
        else:
            paths.append(resolve_allowed(item, roots, no_roots))
    return paths, urls


def _crawl_settings(request: LoadRequest, remote: bool) -> dict[str, object]:
    if remote and request.crawl_options:
        raise BadInputError(
            "crawl_options are a local caller's (CLI, Python); a remote request sets max_depth and max_pages only."
        )
    crawl: dict[str, object] = {**request.crawl_options, "max_depth": request.max_depth}
    if request.max_pages is not None:
        crawl["max_pages"] = request.max_pages
    return crawl


def plan_load(
    components: Components,
    request: LoadRequest,
    roots: list[Path] | None = None,
    no_roots: str = NO_ROOTS,
) -> LoadPlan:
    """The checked request, or the error saying what is wrong with it (nothing read yet)."""
    inputs = [item.strip() for item in request.inputs if item and item.strip()]
    collection = request.collection.strip() if request.collection and request.collection.strip() else None
    collection = collection or components.vector_db.default_collection
    validators = _refresh_validators(components, request, collection)
    inputs += [url for url in validators if url not in inputs]
    if not inputs:
        more = " (--refresh found no web page stored in the collection)" if request.refresh else ""
        raise BadInputError(f"No input given: name files, folders or http(s) URLs to load{more}.")
    if roots is not None and len(inputs) > MAX_INPUTS:
        raise BadInputError(f"{len(inputs)} inputs in one request; at most {MAX_INPUTS}: name their folder instead.")
    crawl = _crawl_settings(request, remote=roots is not None)
    paths, urls = split_inputs(inputs, roots, no_roots)
    if urls and components.web_crawler is None:
        reason = components.web_crawler_error or "no web crawler is configured"
        raise NotReadyError(f"Cannot load URLs: {reason}")
    if validators:
        crawl["validators"] = validators
    return LoadPlan(
        request,
        collection,
        paths,
        urls,
        roots,
        crawl,
    )


def _refresh_validators(components: Components, request: LoadRequest, collection: str) -> dict[str, dict[str, str]]:
    """With `refresh`: the collection's stored web pages and their validators (see web_sources)."""
    if not request.refresh:
        return {}
    crawler = components.web_crawler
    if crawler is None or "validators" not in getattr(getattr(crawler, "options", None), "__dataclass_fields__", {}):
        name = type(crawler).__name__ if crawler is not None else "no crawler"
        raise BadInputError(
            f"--refresh needs the built-in HttpCrawler (conditional GET); the configured one is {name}."
        )
    from deepsearcher.offline_loading.web_sources import stored_web_validators

    return stored_web_validators(components.vector_db, normalize_collection_name(collection))


def file_loader_for(components: Components, request: LoadRequest | None = None) -> BaseLoader:
    """The configured file loader, with this load's `text_key`, reading as text the extensions of
    `load_settings.text_extensions` and the request's, and extension-less files that are text."""
    loader = components.file_loader
    if request is not None and request.text_key:
        if not isinstance(loader, FileLoader):
            raise BadInputError(
                f"text_key applies to the built-in FileLoader; the configured {type(loader).__name__} takes its "
                "options in provide_settings.file_loader.config."
            )
        loader = loader.with_options(text_key=request.text_key.strip())
    extensions = list(components.config.load.text_extensions)
    extensions += request.text_extensions if request is not None else []
    return WithTextFiles(loader, extensions)


def pipeline_for(
    components: Components,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
    file_loader: BaseLoader | None = None,
) -> IngestionPipeline:
    """An IngestionPipeline over `components`; sizes not given come from `load_settings`, and
    so does each file's parse budget (its parser, a worker process, starts on the first file
    to parse and stops when the run ends)."""
    settings = components.config.load
    return IngestionPipeline(
        embedding=components.embedding_model,
        vector_db=components.vector_db,
        chunk_size=chunk_size or settings.chunk_size,  # None: the embedding window's size
        chunk_overlap=chunk_overlap if chunk_overlap is not None else settings.chunk_overlap,
        batch_size=batch_size or settings.batch_size,
        window_size=settings.window_size,
        on_progress=on_progress,
        parser=ProcessParser(file_loader or file_loader_for(components), ParseBudget.from_settings(settings.budget())),
    )


def file_entries_of(plan: LoadPlan, loader: BaseLoader) -> list[LoadedSource]:
    """Every file of the plan (under the roots when they apply), listed before any is read:
    the progress has a total, and a file that vanishes mid-load is named as such."""
    if plan.roots is None:
        return list(iter_file_entries([os.fspath(path) for path in plan.paths], loader))
    return list(iter_allowed_file_entries([Path(path) for path in plan.paths], loader, plan.roots))  # resolved


def sources_of(
    components: Components,
    plan: LoadPlan,
    on_progress: ProgressCallback | None = None,
    loader: BaseLoader | None = None,
    entries: list[LoadedSource] | None = None,
) -> Iterator[LoadedSource]:
    """The plan's files (`entries` when already listed), then the pages crawled from its URLs;
    `on_progress` hears "counted" with the number of files once they are listed (URLs add
    pages as the crawl finds them)."""
    if entries is None:
        entries = file_entries_of(plan, loader or file_loader_for(components, plan.request))
    if on_progress is not None:
        on_progress("counted", {"files": len(entries), "more": bool(plan.urls)})
    yield from entries
    if plan.urls:
        from deepsearcher.offline_loading.web_sources import iter_web_sources

        yield from iter_web_sources(components.require_web_crawler(), plan.urls, **plan.crawl)


def _plan_sync(
    components: Components,
    plan: LoadPlan,
    entries: list[LoadedSource],
    pipeline: IngestionPipeline,
    removed: list[str] | None = None,
    stored: dict[str, SourceRecord] | None = None,
) -> SyncPlan:
    """What the given folders lost since they were stored, and which new files are those renamed.
    `removed`: paths known to be gone (a watcher's events): the stored sources at or under them
    are the gone ones, whatever folders were given. `stored`: the collection's sources, when
    already listed (a listing reads every row)."""
    if plan.request.force_new_collection:
        return SyncPlan()
    if stored is None:
        stored = components.vector_db.list_sources(plan.collection)
    if removed is None:
        prefixes = folder_prefixes(plan.paths)
        if not prefixes:
            return SyncPlan()
        known = stored
    else:
        if not removed:
            return SyncPlan()
        prefixes = [""]
        scope = [safe_reference(os.path.abspath(path)).rstrip(os.sep) for path in removed]
        known = {
            reference: record
            for reference, record in stored.items()
            if any(reference == path or reference.startswith(path + os.sep) for path in scope)
        }
    chunking = (pipeline.chunk_size, pipeline.chunk_overlap, pipeline.window_size)
    parser = pipeline.parser
    fingerprint = Fingerprinter(getattr(parser, "loader", None), chunking, getattr(parser, "budget", None))
    return plan_sync(known, prefixes, entries, fingerprint)


def _drop_if_empty(components: Components, collection: str) -> None:
    """A collection this load created and stored nothing in is dropped: a failed first load
    leaves no empty collection behind to be listed, routed to and searched."""
    store = components.vector_db
    if store.has_collection(collection) and not store.has_documents(collection):
        store.clear_db(collection)


def _note_sync(summary: LoadSummary, sync: SyncPlan, moved: list[tuple[str, str]], removed: bool) -> None:
    summary.gone = list(sync.gone)
    summary.removed_gone = removed and bool(sync.gone)
    summary.renamed = [[old, new] for old, new in moved]
    if summary.removed_gone and NOTHING_LOADED in summary.warnings:
        summary.warnings.remove(NOTHING_LOADED)  # removing what is gone is what this load had to do
    renamed_from = {new: old for old, new in moved}
    for outcome in summary.sources:
        if outcome.source in renamed_from:
            outcome.reason = f"renamed from {renamed_from[outcome.source]}: its stored vectors were kept"


def run_load(
    components: Components,
    plan: LoadPlan,
    on_progress: ProgressCallback | None = None,
    removed: list[str] | None = None,
) -> LoadSummary:
    """The pipeline over the plan's sources; the caller holds the collection's write lock.

    Before it: renamed files get their stored rows copied (`offline_loading.sync`). After it:
    with `sync`, sources gone from the given folders are removed. A collection this load
    created is dropped again when nothing was stored in it (also when the load is stopped).
    `removed`: see `_plan_sync` (the watcher's deleted paths)."""
    request = plan.request
    loader = file_loader_for(components, request)
    pipeline = pipeline_for(
        components,
        request.chunk_size,
        request.chunk_overlap,
        request.batch_size,
        on_progress,
        file_loader=loader,
    )
    existed = components.vector_db.has_collection(plan.collection)
    entries = file_entries_of(plan, loader)
    # One listing of the stored sources (it reads every row) serves the sync plan and the pipeline.
    listed = existed and not request.force_new_collection
    stored = components.vector_db.list_sources(plan.collection) if listed else None
    sync = _plan_sync(components, plan, entries, pipeline, removed, stored) if existed else SyncPlan()
    try:
        moved = apply_moves(components.vector_db, plan.collection, sync.moves)
        if stored is not None:  # a moved source's rows were copied under its new name
            stored = {**stored, **{new: replace(stored[old], reference=new) for old, new in moved if old in stored}}
        summary = pipeline.run(
            sources_of(components, plan, on_progress, loader, entries),
            collection_name=plan.collection,
            collection_description=request.description or "",
            force_new_collection=request.force_new_collection,
            stored=stored,
        )
        if request.sync and sync.gone:
            remove_sources(components.vector_db, plan.collection, sync.gone)
        if summary.worked:
            summary.index_declared = components.vector_db.fit_index(plan.collection) or ""
    finally:
        if not existed:
            _drop_if_empty(components, plan.collection)
    _note_sync(summary, sync, moved, request.sync)
    return summary


def load(
    components: Components,
    request: LoadRequest,
    roots: list[Path] | None = None,
    on_progress: ProgressCallback | None = None,
) -> LoadSummary:
    """Check, then load under the collection's write lock: the whole use case in one call."""
    plan = plan_load(components, request, roots)
    with collection_lock(plan.collection):
        return run_load(components, plan, on_progress)


def changes_plan(components: Components, collection: str | None, changed: list[str]) -> LoadPlan:
    """The plan loading `changed` paths (a watcher's settled files and folders) with sync on."""
    request = LoadRequest(inputs=list(changed), collection=collection, sync=True)
    name = normalize_collection_name(collection) if collection else components.vector_db.default_collection
    return LoadPlan(request, name, list(changed), [])


def sync_changes(
    components: Components,
    collection: str | None,
    changed: list[str],
    removed: list[str],
) -> LoadSummary:
    """Bring a collection up to date with paths a watcher saw change: `changed` files and folders
    are loaded (unchanged ones skipped), stored sources at or under `removed` paths are deleted,
    and a removed file that reappears elsewhere with the same bytes keeps its vectors."""
    plan = changes_plan(components, collection, changed)
    with collection_lock(plan.collection):
        return run_load(components, plan, removed=list(removed))
