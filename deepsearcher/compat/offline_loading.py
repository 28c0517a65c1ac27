"""DeepSearcher's `offline_loading` functions: put files and web pages into the vector store.

`load_from_local_files` and `load_from_website` keep DeepSearcher's names and arguments;
both run the load use case (deepsearcher/app/loading.py) with the components of the last
`init_config` and return a LoadSummary (DeepSearcher returned None) naming every failed input.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from deepsearcher.app import collections as collections_app
from deepsearcher.app.loading import LoadRequest, load, pipeline_for
from deepsearcher.compat import configuration
from deepsearcher.offline_loading.pipeline import IngestionPipeline, ProgressCallback
from deepsearcher.offline_loading.sources import LoadedSource, iter_file_sources
from deepsearcher.offline_loading.summary import LoadSummary, SourceFailure
from deepsearcher.types.errors import BadInputError

__all__ = [
    "IngestionPipeline",
    "LoadSummary",
    "LoadedSource",
    "SourceFailure",
    "configured_pipeline",
    "delete_source",
    "iter_file_sources",
    "load_from_local_files",
    "load_from_website",
    "load_inputs",
    "with_web_sources",
]


def configured_pipeline(
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> IngestionPipeline:
    """An IngestionPipeline with the configured embedding and store; sizes not given come
    from `load_settings` of the config."""
    return pipeline_for(configuration.current(), chunk_size, chunk_overlap, batch_size, on_progress)


def with_web_sources(
    file_sources: Iterable[LoadedSource],
    urls: list[str],
    crawl_kwargs: dict[str, Any] | None = None,
) -> Iterator[LoadedSource]:
    """`file_sources`, then the pages the configured crawler finds from `urls`."""
    yield from file_sources
    if urls:
        from deepsearcher.offline_loading.web_sources import iter_web_sources

        yield from iter_web_sources(configuration.current().require_web_crawler(), urls, **(crawl_kwargs or {}))


def load_from_local_files(
    paths_or_directory: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    collection_name: str | None = None,
    collection_description: str | None = None,
    force_new_collection: bool = False,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> LoadSummary:
    """Load files and folders (recursively) into `collection_name`; unchanged files are skipped."""
    paths = [paths_or_directory] if isinstance(paths_or_directory, (str, os.PathLike)) else list(paths_or_directory)
    sizes = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "batch_size": batch_size}
    inputs = [os.fspath(path) for path in paths]
    return load_inputs(inputs, collection_name, collection_description, force_new_collection, on_progress, **sizes)


def load_from_website(
    urls: str | Iterable[str],
    collection_name: str | None = None,
    collection_description: str | None = None,
    force_new_collection: bool = False,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
    **crawl_kwargs: Any,
) -> LoadSummary:
    """Crawl `urls` (see HttpCrawler for depth, page limits and safety) and load the pages."""
    url_list = [urls] if isinstance(urls, str) else list(urls)
    if any(not is_url(url) for url in url_list):
        raise BadInputError(
            f"load_from_website takes http(s) URLs, got {url_list}; load files with load_from_local_files."
        )
    crawl_kwargs.update(chunk_size=chunk_size, chunk_overlap=chunk_overlap, batch_size=batch_size)
    return load_inputs(
        url_list, collection_name, collection_description, force_new_collection, on_progress, **crawl_kwargs
    )


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def load_inputs(
    inputs: Iterable[str],
    collection_name: str | None = None,
    collection_description: str | None = None,
    force_new_collection: bool = False,
    on_progress: ProgressCallback | None = None,
    **options: Any,
) -> LoadSummary:
    """Files, folders and URLs mixed, in one run and one summary: the load use case
    (`deepsearcher.app.loading`) with the components of the last `init_config`.

    `options`: chunk_size, chunk_overlap, batch_size, max_depth, max_pages, and the crawler's own."""
    sizes = {key: options.pop(key, None) for key in ("chunk_size", "chunk_overlap", "batch_size")}
    request = LoadRequest.create(
        inputs=list(inputs),
        collection=collection_name,
        description=collection_description,
        force_new_collection=force_new_collection,
        **sizes,
        max_depth=options.pop("max_depth", None),
        max_pages=options.pop("max_pages", None),
        crawl_options=options,
    )
    return load(configuration.current(), request, on_progress=on_progress)


def delete_source(reference: str, collection_name: str | None = None) -> int:
    """Remove every chunk of one source (file path or URL); returns how many were removed."""
    if "://" not in reference:
        reference = os.path.abspath(reference)
    return collections_app.delete_source(configuration.current(), collection_name, reference)
