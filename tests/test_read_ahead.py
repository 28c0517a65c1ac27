"""The read-ahead stage of ingestion: the next files are parsed while the current batch embeds.

The overlap is shown by ordering, never by timing: the embedding of the first batch waits
(bounded) for the loader to start on a later file, which can only happen when parsing runs
beside the embedding. Real files, the real bundled model behind a thin recording wrapper, and
a real Milvus Lite store.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from pathlib import Path

import pytest

from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.parse_worker import ThreadParser
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.read_ahead import ReadAhead
from deepsearcher.offline_loading.sources import iter_file_entries
from deepsearcher.types import Document
from deepsearcher.vector_db.milvus import Milvus

WAIT = 20.0  # seconds a step waits for the other before the test fails (never reached when it works)


class RecordingLoader(FileLoader):
    """The real file loader, recording which files it was asked to parse (and from which thread).
    The records are private attributes, which a loader's settings signature leaves out."""

    def __init__(self) -> None:
        super().__init__()
        self._started: list[str] = []
        self._threads: set[str] = set()
        self._second_started = threading.Event()

    def load_file(self, file_path: str | os.PathLike[str]) -> list[Document]:
        self._started.append(Path(file_path).name)
        self._threads.add(threading.current_thread().name)
        if len(self._started) >= 2:
            self._second_started.set()
        return super().load_file(file_path)


class WaitingEmbedding(BaseEmbedding):
    """The real model; its first batch waits until the loader has started on another file."""

    def __init__(self, inner: BaseEmbedding, loader: RecordingLoader) -> None:
        self.inner = inner
        self.loader = loader
        self.overlapped: bool | None = None
        self.model_name = inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.overlapped is None:
            self.overlapped = self.loader._second_started.wait(WAIT)
        return self.inner.embed_documents(texts)


def folder_of(tmp_path: Path, files: int) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for number in range(files):
        paragraphs = [f"Report {number}, section {part}: the survey of lake {number * 7 + part}." for part in range(6)]
        (folder / f"report{number}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return folder


def test_the_next_file_is_parsed_while_the_first_batch_embeds(tmp_path: Path, milvus_uri: str, embedding) -> None:
    folder = folder_of(tmp_path, files=4)
    loader = RecordingLoader()
    waiting = WaitingEmbedding(embedding, loader)
    store = Milvus(uri=milvus_uri)
    pipeline = IngestionPipeline(
        waiting, store, chunk_size=80, chunk_overlap=0, batch_size=4, parser=ThreadParser(loader)
    )

    summary = pipeline.run(iter_file_entries([folder], loader), collection_name="kb")

    assert waiting.overlapped is True, "the second file was not parsed while the first batch embedded"
    assert loader._threads == {"deepsearcher-read-ahead"}, "parsing ran on the caller's thread"
    assert sorted(loader._started) == [f"report{n}.txt" for n in range(4)]
    assert summary.chunks_inserted == summary.embeddings_computed > 4
    assert len(store.list_sources("kb")) == 4 and all(r.complete for r in store.list_sources("kb").values())
    again = IngestionPipeline(
        embedding, store, chunk_size=80, chunk_overlap=0, batch_size=4, parser=ThreadParser(loader)
    )
    rerun = again.run(iter_file_entries([folder], loader), collection_name="kb")
    assert rerun.embeddings_computed == 0 and rerun.chunks_unchanged == summary.chunks_inserted
    store.close()


def test_a_failing_embedding_stops_the_read_ahead_and_stores_nothing_half_done(
    tmp_path: Path, milvus_uri: str, embedding
) -> None:
    folder = folder_of(tmp_path, files=30)
    loader = RecordingLoader()

    class Failing(WaitingEmbedding):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("the embedding service went away")

    store = Milvus(uri=milvus_uri)
    pipeline = IngestionPipeline(
        Failing(embedding, loader), store, chunk_size=80, chunk_overlap=0, batch_size=4, parser=ThreadParser(loader)
    )
    with pytest.raises(RuntimeError, match="went away"):
        pipeline.run(iter_file_entries([folder], loader), collection_name="kb")
    parsed = len(loader._started)
    time.sleep(0.3)  # a producer left running would go on parsing
    assert len(loader._started) == parsed < 30, "the read-ahead went on after the load failed"
    assert not [t for t in threading.enumerate() if t.name == "deepsearcher-read-ahead"]
    store.close()


def test_read_ahead_keeps_order_bounds_its_weight_and_raises_in_the_consumer() -> None:
    prepared: list[int] = []

    def prepare(item: int) -> int:
        prepared.append(item)
        if item == 7:
            raise ValueError("item 7 is broken")
        return item

    reader = ReadAhead(range(10), prepare, weight=lambda item: 3, max_weight=6)
    seen: list[int] = []
    with reader, pytest.raises(ValueError, match="item 7"):
        for item in reader:
            if not seen:
                time.sleep(0.2)  # the producer fills its budget meanwhile, and stops there
                assert len(prepared) <= 4, f"prepared {len(prepared)}: one taken, two queued, one in hand at most"
            seen.append(item)
    assert seen == list(range(7))


def test_an_item_heavier_than_the_budget_still_passes_and_the_context_is_the_callers() -> None:
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    marker.set("the caller's")
    reader = ReadAhead(["a", "b"], lambda item: f"{item}:{marker.get()}", weight=lambda _: 100, max_weight=2)
    with reader:
        assert list(reader) == ["a:the caller's", "b:the caller's"]


def test_closing_early_interrupts_the_item_in_hand_and_closes_the_generator() -> None:
    release = threading.Event()
    closed = threading.Event()
    interrupted: list[bool] = []

    def items():
        try:
            yield 1
            yield 2
            yield 3
        finally:
            closed.set()

    def prepare(item: int) -> int:
        if item == 2:
            release.wait(WAIT)  # a long parse, ended by the interrupt
        return item

    def interrupt() -> None:
        interrupted.append(True)
        release.set()

    reader = ReadAhead(items(), prepare, weight=lambda _: 1, max_weight=10, interrupt=interrupt)
    with reader:
        assert next(iter(reader)) == 1
    assert interrupted == [True]
    assert closed.wait(WAIT)
