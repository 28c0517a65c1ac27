"""The streaming, idempotent ingestion pipeline: sources → chunks → embeddings → store.

Why it is shaped this way:
- Streaming: one source is loaded at a time and chunks are embedded in fixed-size
  batches, so memory stays flat on a large corpus.
- Overlap: the stages run side by side, so the slowest alone sets the pace. A read-ahead
  thread lists, hashes, parses (in the parse worker) and splits the next sources, up to
  two batches of chunks ahead, while the model embeds batch N+1 and a single writer thread
  inserts batch N (ONNX Runtime releases the GIL), then deletes the previous version of
  each changed source whose last chunk that batch held. Every decision against the store
  and every summary line stays in the calling thread, in source order.
- Idempotency: every chunk carries its source's hash and chunk count; a source whose
  stored hash matches and whose chunks are all present is skipped without embedding. For
  a file the hash is of its bytes (and the parse settings), taken before it is parsed, so
  an unchanged re-load reads and hashes each file once and parses nothing.
- Budget: each file is parsed by `parser` (a worker process under the per-file budget,
  see `parse_worker`), so one hostile file is stopped and named while the rest load.
- Crash-exactness: every chunk also carries its `chunk_index` and a `chunk_key` (source
  hash + index + text hash). A source counts as complete only when each key is stored
  exactly once (checked row by row, by id, never by count: after a crash Milvus Lite can
  show a batch twice). Copies are removed, and resuming a half-loaded source keeps the
  chunks already stored and embeds only the missing ones.
- Replacement without a gap: a changed source's new chunks are stored before its old ones
  are removed (one delete of their ids, once the last new chunk is stored), so at every
  instant the store holds the old version whole or the new one whole, never neither: a
  search meanwhile finds the source's old text. Every reader, in any process, sees one version
  whole: the store's version marker (`hide_versions`, stored where the store can) hides the new
  version until its last chunk is stored, then the old one until its rows are deleted. A load
  killed or failed in between leaves both, the new one still hidden; the next run stores the
  rest of the new version, then removes the old one.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from deepsearcher.config.settings import DEFAULT_BATCH_SIZE, DEFAULT_CHUNK_OVERLAP, DEFAULT_WINDOW_SIZE
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.loader.splitter import split_docs_to_chunks
from deepsearcher.offline_loading.embed_scheduler import EmbedScheduler
from deepsearcher.offline_loading.file_hash import file_fingerprint, hash_file, loader_signature
from deepsearcher.offline_loading.read_ahead import ReadAhead
from deepsearcher.offline_loading.sources import LoadedSource
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.types import Chunk
from deepsearcher.vector_db.base import BaseVectorDB, SourceRecord, normalize_collection_name

ProgressCallback = Callable[[str, dict[str, Any]], None]

#: Called with ("embedded" | "inserted", N) right after the N-th batch (from 1) was embedded / stored;
#: the crash-injection sweep installs one from deepsearcher/testing/crash_points.py.
BATCH_OBSERVERS: list[Callable[[str, int], None]] = []


def _announce_batch(stage: str, batch: int) -> None:
    for observer in BATCH_OBSERVERS:
        observer(stage, batch)


def chunk_key(fingerprint: str, index: int, text: str) -> str:
    """A chunk's identity across runs: its source's hash, its place, and its own text."""
    text_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hashlib.sha256(f"{fingerprint}:{index}:{text_hash}".encode()).hexdigest()[:32]


def source_fingerprint(source: LoadedSource) -> str:
    """Hash of a source's documents in order: any change to any record changes it."""
    digest = hashlib.sha256()
    for document in source.documents:
        digest.update(document.content_hash.encode())
    return digest.hexdigest()


@dataclass
class Stale:
    """The rows of a stored source that belong to versions other than `current` (the one loading)."""

    current: str
    ids: list[Any] = field(default_factory=list)
    #: Their versions (source hashes), where the store says
    versions: set[str] = field(default_factory=set)


@dataclass
class PreparedSource:
    """A source as the read-ahead leaves it: parsed and split, or why there is nothing to embed."""

    source: LoadedSource
    fingerprint: str | None = None
    #: Its chunks, keyed and numbered; None when it has none to offer (skipped, failed, no text).
    chunks: list[Chunk] | None = None
    #: Its bytes match a completely stored source: it was not parsed.
    unchanged: bool = False

    @property
    def weight(self) -> int:
        return len(self.chunks or ())


class IngestionPipeline:
    """Loads sources into one collection; see the module docstring for the design."""

    def __init__(
        self,
        embedding: BaseEmbedding,
        vector_db: BaseVectorDB,
        chunk_size: int | None = None,
        chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
        batch_size: int = DEFAULT_BATCH_SIZE,
        window_size: int = DEFAULT_WINDOW_SIZE,
        on_progress: ProgressCallback | None = None,
        parser: Any = None,
    ) -> None:
        """`parser` parses file entries (`parse_worker.ProcessParser` / `ThreadParser`);
        without one, entries are parsed in this thread under the default budget."""
        self.embedding = embedding
        self.parser = parser
        self.vector_db = vector_db
        # None: what fits the embedding model's window, so every character of a chunk is embedded.
        self.chunk_size = chunk_size or embedding.default_chunk_size()
        self.chunk_overlap = chunk_overlap
        self.batch_size = batch_size
        self.window_size = window_size
        self.on_progress = on_progress or (lambda event, info: None)
        self._scheduler = EmbedScheduler(embedding)  # batches in flight: the embedding's max_concurrency

    def run(
        self,
        sources: Iterable[LoadedSource],
        collection_name: str | None = None,
        collection_description: str = "",
        force_new_collection: bool = False,
        stored: dict[str, SourceRecord] | None = None,
    ) -> LoadSummary:
        """`stored`: the collection's sources when the caller listed them already (app/loading)."""
        try:
            return self._run(sources, collection_name, collection_description, force_new_collection, stored)
        finally:
            if self.parser is not None:
                self.parser.close()  # the worker process goes; another run starts a fresh one

    def _run(
        self,
        sources: Iterable[LoadedSource],
        collection_name: str | None,
        collection_description: str,
        force_new_collection: bool,
        stored: dict[str, SourceRecord] | None = None,
    ) -> LoadSummary:
        started = time.perf_counter()
        collection = (
            normalize_collection_name(collection_name) if collection_name else self.vector_db.default_collection
        )
        self.vector_db.init_collection(
            dim=self.embedding.dimension,
            collection=collection,
            description=collection_description,
            force_new_collection=force_new_collection,
            embedding_model=self.embedding.model_name,
        )
        if stored is None and not force_new_collection:
            stored = self.vector_db.list_sources(collection)
        known = {} if force_new_collection else stored or {}
        summary = LoadSummary(collection=collection)
        self._scheduler.forget()  # texts repeat within one run; a re-run computes what it restores
        self._batches = 0
        self._signature: str | None = None
        #: (reference, key of its last chunk to store) -> the rows of its previous versions
        self._retiring: dict[tuple[str, Any], Stale] = {}
        pending: list[Chunk] = []
        read_ahead = ReadAhead(
            sources,
            lambda source: self._read(source, known),
            weight=lambda prepared: prepared.weight,
            max_weight=2 * self.batch_size,
            interrupt=getattr(self.parser, "interrupt", None),
        )
        with read_ahead, ThreadPoolExecutor(max_workers=1, thread_name_prefix="deepsearcher-insert") as writer:
            inserting: Future[int] | None = None
            for prepared in read_ahead:
                chunks = self._admit(prepared, known, collection, summary)
                pending.extend(chunks)
                while len(pending) >= self.batch_size:
                    batch, pending = (
                        pending[: self.batch_size],
                        pending[self.batch_size :],
                    )
                    inserting = self._embed_and_insert(batch, collection, writer, inserting, summary)
            if pending:
                inserting = self._embed_and_insert(pending, collection, writer, inserting, summary)
            inserting = self._embed_and_insert([], collection, writer, inserting, summary)  # batches still in flight
            if inserting is not None:
                summary.chunks_inserted += inserting.result()
                _announce_batch("inserted", self._batches)
        summary.seconds = time.perf_counter() - started
        summary.finish()
        self.on_progress("done", {"summary": summary})
        return summary

    def _fingerprint(self, sha256: str, loader: str | None = None) -> str:
        if loader is None:
            if self._signature is None:
                self._signature = loader_signature(getattr(self.parser, "loader", None))
            loader = self._signature
        return file_fingerprint(sha256, loader, (self.chunk_size, self.chunk_overlap, self.window_size))

    def _open_entry(self, source: LoadedSource, known: dict[str, SourceRecord]) -> tuple[LoadedSource, str | None]:
        """A file entry parsed (or left unparsed when its bytes are unchanged: then the
        fingerprint comes back with no parse), and its fingerprint (None when it failed)."""
        assert source.read_path is not None
        budget = getattr(self.parser, "budget", None)
        hashed = hash_file(source.reference, source.read_path, budget)
        if hashed.error is not None:
            return LoadedSource(source.reference, error=hashed.error, limit=hashed.limit), None
        fingerprint = self._fingerprint(hashed.sha256)
        record = known.get(source.reference)
        if record is not None and record.source_hash == fingerprint and record.complete:
            return source, fingerprint  # unchanged: not parsed
        if self.parser is None:
            raise ValueError(f"{source.reference}: a file entry reached a pipeline without a parser (give parser=...)")
        parsed = self.parser.parse(source)
        if source.listed is not None and hashed.stamp != source.listed and parsed.changed is None:
            (listed_size, _), (size, _) = source.listed, hashed.stamp or (0, 0)
            parsed.changed = (
                f"changed during the load ({listed_size:,} bytes when listed, {size:,} when read): "
                "loaded as it was when read"
            )
        if parsed.file_sha256 is not None and parsed.file_sha256 != hashed.sha256:
            # it changed between the hash and the parse: what was parsed is what is stored
            fingerprint = self._fingerprint(parsed.file_sha256, parsed.loader_signature)
            parsed.changed = parsed.changed or "changed while the load read it: the version parsed was stored"
        return parsed, fingerprint

    def _read(self, source: LoadedSource, known: dict[str, SourceRecord]) -> PreparedSource:
        """One source hashed, parsed and split, in the read-ahead thread: nothing here touches
        the store or the summary (`_admit` does, in order)."""
        fingerprint: str | None = None
        if source.pending:
            source, fingerprint = self._open_entry(source, known)
            if source.pending:
                return PreparedSource(source, fingerprint, unchanged=True)
        if source.unsupported or source.skip_reason is not None or source.error is not None:
            return PreparedSource(source)
        if not any(document.page_content.strip() for document in source.documents):
            return PreparedSource(source)
        if fingerprint is None:
            fingerprint = (
                self._fingerprint(source.file_sha256, source.loader_signature)
                if source.file_sha256 is not None
                else source_fingerprint(source)
            )
        chunks = split_docs_to_chunks(
            source.documents,
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            window_size=self.window_size,
            window_parts=True,  # the store keeps the sides only; RetrievalResult joins them back
        )
        for index, chunk in enumerate(chunks):
            chunk.reference = source.reference
            chunk.metadata["source_hash"] = fingerprint
            chunk.metadata["source_chunks"] = len(chunks)
            chunk.metadata["chunk_index"] = index
            chunk.metadata["chunk_key"] = chunk_key(fingerprint, index, chunk.text)
        return PreparedSource(source, fingerprint, chunks)

    def _admit(
        self, prepared: PreparedSource, known: dict[str, SourceRecord], collection: str, summary: LoadSummary
    ) -> list[Chunk]:
        """Decide what to do with one prepared source and return the chunks to embed (maybe none)."""
        source = prepared.source
        reference = source.reference
        if prepared.unchanged:
            summary.chunks_unchanged += known[reference].chunk_count
            summary.add(reference, "unchanged")
            self.on_progress("skipped", {"source": reference})
            return []
        if source.unsupported:
            summary.skip_unsupported(reference, source.skip_reason or "unsupported file type")
            self.on_progress("unsupported", {"source": reference})
            return []
        if source.skip_reason is not None:
            summary.add(reference, "skipped", source.skip_reason, fatal=False)
            self.on_progress("unsupported", {"source": reference})
            return []
        if source.error is not None:
            summary.fail(reference, source.error, fatal=source.fatal, limit=source.limit)
            self.on_progress("failed", {"source": reference, "reason": source.error})
            return []
        if prepared.chunks is None or prepared.fingerprint is None:
            summary.fail(reference, "no text could be extracted")
            self.on_progress("failed", {"source": reference, "reason": "no text could be extracted"})
            return []
        fingerprint, chunks = prepared.fingerprint, prepared.chunks
        record = known.get(reference)
        todo = chunks
        if record is not None:
            audit = self._audit(collection, reference, fingerprint, chunks, record, summary)
            if audit is None:  # a store that cannot list rows: the old version goes first
                self.vector_db.delete_by_reference(collection, reference)
                summary.add(reference, "replaced")
            else:
                todo, stale = audit
                if not todo:
                    self._retire(collection, stale)  # the new version is whole already
                    if not stale.ids:
                        summary.chunks_unchanged += len(chunks)
                        summary.add(reference, "unchanged", source.changed or "")
                        self.on_progress("skipped", {"source": reference})
                        return []
                elif stale.ids:
                    # every reader keeps to the old version until the new one is whole (a stored marker)
                    self.vector_db.hide_versions(collection, {fingerprint})
                    self._retiring[(reference, todo[-1].metadata["chunk_key"])] = stale
                kept = len(chunks) - len(todo)
                summary.chunks_kept += kept
                reason = f"resumed an interrupted load: kept {kept} of {len(chunks)} stored chunks" if kept else ""
                replaced = bool(stale.ids) and (bool(stale.versions) or record.source_hash != fingerprint)
                summary.add(reference, "replaced" if replaced else "loaded", reason)
        else:
            summary.add(reference, "loaded")
        if source.changed is not None:
            summary.note_changed(reference, source.changed)
        summary.documents += len(source.documents)
        self.on_progress("source", {"source": reference, "chunks": len(todo)})
        return todo

    def _audit(
        self,
        collection: str,
        reference: str,
        fingerprint: str,
        chunks: list[Chunk],
        record: Any,
        summary: LoadSummary,
    ) -> tuple[list[Chunk], Stale] | None:
        """The chunks of a stored source still to embed, and its rows of another version (None when
        the store cannot list rows). Extra copies of current chunks are deleted on the way;
        rows of another version are not: they go once the current version is whole (`_retire`), so
        every reader finds the old version whole until the new one is."""
        rows = self.vector_db.stored_chunks(collection, reference)
        if rows is None:  # a store that cannot list rows: trust its counts
            if record.source_hash != fingerprint:
                return None
            if record.complete:
                return [], Stale(fingerprint)
            self.vector_db.delete_by_reference(collection, reference)
            return chunks, Stale(fingerprint)
        expected = {chunk.metadata["chunk_key"]: chunk.metadata["chunk_index"] for chunk in chunks}
        id_copies = Counter(row.id for row in rows)
        holders: dict[str, list[Any]] = {}
        stale = Stale(fingerprint)
        for row in rows:
            if expected.get(row.chunk_key, -1) != row.chunk_index:
                if row.id not in stale.ids:
                    stale.ids.append(row.id)  # no current chunk has this key at this index: another version
                    if row.source_hash and row.source_hash != fingerprint:
                        stale.versions.add(row.source_hash)
            elif row.id not in holders.setdefault(row.chunk_key, []):
                holders[row.chunk_key].append(row.id)
        stored: set[str] = set()
        remove: set[Any] = set()
        for key, ids in holders.items():
            if any(id_copies[row_id] > 1 for row_id in ids):
                remove.update(ids)  # one id stored twice: deleting it removes every copy
            else:
                remove.update(ids[1:])
                stored.add(key)
        if remove:
            self.vector_db.delete_ids(collection, sorted(remove))
            summary.duplicates_removed += sum(id_copies[row_id] for row_id in remove)
        return [chunk for chunk in chunks if chunk.metadata["chunk_key"] not in stored], stale

    def _retire(self, collection: str, *stales: Stale) -> None:
        """Remove the rows of sources' previous versions, now that their current ones are stored
        whole: searches switch from the old to the new in one step, then the old rows go. The
        sources one batch finishes are retired together (one marker move each way, one delete:
        a move costs a consistent read on a server)."""
        ids = [row_id for stale in stales for row_id in stale.ids]
        if ids:
            old = set().union(*(stale.versions for stale in stales))
            self.vector_db.hide_versions(collection, old, show={stale.current for stale in stales if stale.ids})
            self.vector_db.delete_ids(collection, ids)
            self.vector_db.hide_versions(collection, (), show=old)

    def _store(self, collection: str, batch: list[Chunk]) -> int:
        """Insert one batch (in the writer thread); then retire the previous versions of the sources
        whose last missing chunk it held: the batches before it are stored already (one writer)."""
        inserted = self.vector_db.insert_data(collection, batch)
        finished = (self._retiring.pop((chunk.reference, chunk.metadata.get("chunk_key")), None) for chunk in batch)
        self._retire(collection, *(stale for stale in finished if stale is not None))
        return inserted

    def _embed_and_insert(
        self,
        batch: list[Chunk],
        collection: str,
        writer: ThreadPoolExecutor,
        previous: Future[int] | None,
        summary: LoadSummary,
    ) -> Future[int] | None:
        """Embed `batch` (up to the embedding's max_concurrency batches in flight; an empty
        batch waits for those) and queue each finished one for the single writer."""
        for done, computed in self._scheduler.submit(batch) if batch else self._scheduler.drain():
            summary.embeddings_computed += computed
            summary.embeddings_shared += len(done) - computed
            self._batches += 1
            _announce_batch("embedded", self._batches)
            if previous is not None:
                summary.chunks_inserted += previous.result()
                _announce_batch("inserted", self._batches - 1)
            self.on_progress("embedded", {"chunks": len(done)})
            previous = writer.submit(self._store, collection, done)
        return previous
