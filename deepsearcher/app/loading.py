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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from deepsearcher.app.components import Components
from deepsearcher.app.locks import collection_lock
from deepsearcher.app.path_rules import (
    NO_ROOTS,
    iter_allowed_file_entries,
    resolve_allowed,
)
from deepsearcher.loader.file_loader._budget import ParseBudget
from deepsearcher.loader.file_loader.base import BaseLoader
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.loader.file_loader.text_detection import WithTextFiles
from deepsearcher.offline_loading.parse_worker import ProcessParser
from deepsearcher.offline_loading.pipeline import IngestionPipeline, ProgressCallback
from deepsearcher.offline_loading.sources import LoadedSource, iter_file_entries
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.types.errors import BadInputError, NotReadyError

__all__ = [
    "LoadPlan",
    "LoadRequest",
    "check_url",
    "load",
    "pipeline_for",
    "plan_load",
    "run_load",
    "split_inputs",
]

#: Crawl depth a request may ask for (each level multiplies the pages fetched).
MAX_DEPTH = 10
#: Paths and URLs one request from a remote client (REST, MCP) may name: a folder names many files.
MAX_INPUTS = 1000


@dataclass(frozen=True)
class LoadRequest:
    """What a front-end was asked to load; None means "the configured default"."""

    inputs: list[str]
    collection: str | None = None
    description: str | None = None
    force_new_collection: bool = False
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    batch_size: int | None = None
    max_depth: int = 0
    max_pages: int | None = None
    crawl_options: dict[str, Any] = field(default_factory=dict)  # other crawler arguments, passed through
    #: More extensions to read as plain text (besides `load_settings.text_extensions`).
    text_extensions: list[str] = field(default_factory=list)
    #: The JSON / JSONL field holding each record's text, for this load.
    text_key: str | None = None


@dataclass(frozen=True)
class LoadPlan:
    """A checked request: the collection, the paths (resolved when roots apply) and URLs."""

    request: LoadRequest
    collection: str
    paths: list[Any]
    urls: list[str]
    roots: list[Path] | None = None
    crawl: dict[str, Any] = field(default_factory=dict)

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
) -> tuple[list[Any], list[str]]:
    """Paths and http(s) URLs; any bad one refuses the whole request.

    `roots` None: the caller loads its own machine (CLI, library), paths are kept as given.
    Otherwise (REST, MCP) each path must resolve under a root (PathRefusedError: 403 / 400).
    """
    paths: list[Any] = []
    urls: list[str] = []
    for item in inputs:
        if "://" in item:
            urls.append(check_url(item))
        elif roots is None:
            paths.append(item)
        else:
            paths.append(resolve_allowed(item, roots, no_roots))
    return paths, urls


def _crawl_settings(request: LoadRequest) -> dict[str, Any]:
    if not 0 <= request.max_depth <= MAX_DEPTH:
        raise BadInputError(f"max_depth must be between 0 and {MAX_DEPTH}, got {request.max_depth}.")
    if request.max_pages is not None and request.max_pages < 1:
        raise BadInputError(f"max_pages must be at least 1, got {request.max_pages}.")
    crawl: dict[str, Any] = {**request.crawl_options, "max_depth": request.max_depth}
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
    if not inputs:
        raise BadInputError("No input given: name files, folders or http(s) URLs to load.")
    if roots is not None and len(inputs) > MAX_INPUTS:
        raise BadInputError(f"{len(inputs)} inputs in one request; at most {MAX_INPUTS}: name their folder instead.")
    crawl = _crawl_settings(request)
    paths, urls = split_inputs(inputs, roots, no_roots)
    if urls and components.web_crawler is None:
        reason = components.web_crawler_error or "no web crawler is configured"
        raise NotReadyError(f"Cannot load URLs: {reason}")
    collection = request.collection.strip() if request.collection and request.collection.strip() else None
    return LoadPlan(
        request,
        collection or components.vector_db.default_collection,
        paths,
        urls,
        roots,
        crawl,
    )


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
    extensions = list(components.load_settings.get("text_extensions") or [])
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
    settings = components.load_settings
    return IngestionPipeline(
        embedding=components.embedding_model,
        vector_db=components.vector_db,
        chunk_size=chunk_size or settings.get("chunk_size"),  # None: the embedding window's size
        chunk_overlap=chunk_overlap if chunk_overlap is not None else settings.get("chunk_overlap", 100),
        batch_size=batch_size or settings.get("batch_size", 256),
        window_size=settings.get("window_size", 300),
        on_progress=on_progress,
        parser=ProcessParser(file_loader or file_loader_for(components), ParseBudget.from_settings(settings)),
    )


def file_entries_of(plan: LoadPlan, loader: BaseLoader) -> list[LoadedSource]:
    """Every file of the plan (under the roots when they apply), listed before any is read:
    the progress has a total, and a file that vanishes mid-load is named as such."""
    if plan.roots is None:
        return list(iter_file_entries([os.fspath(path) for path in plan.paths], loader))
    return list(iter_allowed_file_entries(plan.paths, loader, plan.roots))


def sources_of(
    components: Components,
    plan: LoadPlan,
    on_progress: ProgressCallback | None = None,
    loader: BaseLoader | None = None,
) -> Iterator[LoadedSource]:
    """The plan's files, then the pages crawled from its URLs; `on_progress` hears "counted"
    with the number of files once they are listed (URLs add pages as the crawl finds them)."""
    entries = file_entries_of(plan, loader or file_loader_for(components, plan.request))
    if on_progress is not None:
        on_progress("counted", {"files": len(entries), "more": bool(plan.urls)})
    yield from entries
    if plan.urls:
        from deepsearcher.offline_loading.web_sources import iter_web_sources

        yield from iter_web_sources(components.require_web_crawler(), plan.urls, **plan.crawl)


def run_load(components: Components, plan: LoadPlan, on_progress: ProgressCallback | None = None) -> LoadSummary:
    """The pipeline over the plan's sources; the caller holds the collection's write lock."""
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
    return pipeline.run(
        sources_of(components, plan, on_progress, loader),
        collection_name=plan.collection,
        collection_description=request.description or "",
        force_new_collection=request.force_new_collection,
    )


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
