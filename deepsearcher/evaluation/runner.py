"""Load an evaluation corpus and run its questions through naive retrieval and the agents.

Each finished (question, agent, max_iter) is appended to results.jsonl and flushed at
once, so an interrupted evaluation loses at most the question in flight and `resume`
picks up where it stopped.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepsearcher.app import querying
from deepsearcher.app.components import Components
from deepsearcher.evaluation.dataset import Dataset, DatasetError, Question
from deepsearcher.evaluation.scoring import (
    all_found,
    answer_correct,
    citation_precision,
    citation_support,
    exact_match,
    is_abstention,
    recall_at_k,
    strip_citations,
    token_f1,
)
from deepsearcher.evaluation.unanswerable import UNANSWERABLE_PREFIX, unanswerable_questions
from deepsearcher.offline_loading.pipeline import IngestionPipeline, ProgressCallback
from deepsearcher.offline_loading.summary import LoadSummary
from deepsearcher.types.errors import BadInputError, DeepSearcherError

__all__ = [
    "EvalRunner",
    "RunSpec",
    "build_specs",
    "eval_agents",
    "load_corpus",
    "read_results",
    "row_key",
]

logger = logging.getLogger(__name__)

#: Retrieval only, no LLM: the baseline every agent is compared with.
RETRIEVAL = "naive"
RESULTS_FILE = "results.jsonl"
# One passage, one chunk: far above any passage length, so the splitter never cuts one.
CORPUS_CHUNK_SIZE = 1_000_000
# Naive retrieval fetches at least this many chunks (and at least the largest k).
NAIVE_MIN_TOP_K = 10

RowCallback = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class RunSpec:
    """One configuration to evaluate: an agent and its max_iter (None for naive retrieval)."""

    agent: str
    max_iter: int | None = None

    @property
    def label(self) -> str:
        return self.agent if self.max_iter is None else f"{self.agent}@{self.max_iter}"


def _registered() -> dict[str, bool]:
    """The registered agents an evaluation can run (not routers), each with whether it iterates."""
    from deepsearcher.agent.catalog import agent_infos

    return {info.name: info.iterative for info in agent_infos() if not info.routes_agents and info.name != RETRIEVAL}


def eval_agents() -> list[str]:
    """What `--agent` accepts: naive (retrieval only) and every registered agent but the routers."""
    return [RETRIEVAL, *_registered()]


def build_specs(agents: Iterable[str], max_iters: Sequence[int]) -> list[RunSpec]:
    """naive once (retrieval has no iterations), iterating agents once per max_iter, others once."""
    iterative = _registered()
    specs: list[RunSpec] = []
    for agent in dict.fromkeys(agents):
        if agent == RETRIEVAL:
            specs.append(RunSpec(RETRIEVAL))
        elif agent not in iterative:
            raise BadInputError(f"Unknown agent '{agent}'. Allowed values: {', '.join(eval_agents())}, all.")
        elif iterative[agent]:
            specs.extend(RunSpec(agent, max_iter) for max_iter in dict.fromkeys(max_iters))
        else:
            specs.append(RunSpec(agent))
    return specs


def row_key(row: dict[str, Any]) -> tuple[str, str, int | None]:
    return (str(row["id"]), str(row["agent"]), row.get("max_iter"))


# corpus ---------------------------------------------------------------------------


def load_corpus(
    components: Components, dataset: Dataset, collection: str, on_progress: ProgressCallback | None = None
) -> LoadSummary:
    """Load DATASET_DIR/corpus.jsonl into `collection`, one passage per chunk, title in metadata.

    An unchanged corpus is skipped by the pipeline (nothing is embedded). The collection
    belongs to the evaluation, so it is rebuilt when it holds other sources (the dataset
    folder moved) or was built with another embedding model.
    """
    from deepsearcher.loader.file_loader.jsonl_loader import JsonlLoader
    from deepsearcher.offline_loading.sources import iter_file_sources

    embedding, vector_db = components.embedding_model, components.vector_db
    reference = str(dataset.corpus_path)
    rebuild = _rebuild_reason(vector_db, embedding, collection, reference)
    if rebuild and on_progress is not None:
        on_progress("rebuild", {"collection": collection, "reason": rebuild})
    pipeline = IngestionPipeline(
        embedding=embedding,
        vector_db=vector_db,
        chunk_size=CORPUS_CHUNK_SIZE,
        chunk_overlap=0,
        batch_size=components.config.load.batch_size,
        window_size=0,
        on_progress=on_progress,
    )
    summary = pipeline.run(
        iter_file_sources([dataset.corpus_path], JsonlLoader(text_key="text")),
        collection_name=collection,
        collection_description=f"Evaluation corpus of the {dataset.name} dataset",
        force_new_collection=bool(rebuild),
    )
    if summary.failed:
        raise DatasetError(dataset.corpus_path, f"could not be loaded: {summary.failed[0].reason}")
    return summary


def _rebuild_reason(vector_db: Any, embedding: Any, collection: str, reference: str) -> str | None:
    info = vector_db.get_collection_info(collection)
    if info is None:
        return None
    if (info.embedding_model and embedding.model_name and info.embedding_model != embedding.model_name) or (
        info.dim and info.dim != embedding.dimension
    ):
        return f"it was built with embedding model '{info.embedding_model}' ({info.dim} dims)"
    others = sorted(set(vector_db.list_sources(collection)) - {reference})
    if others:
        return f"it holds other sources ({others[0]}{' …' if len(others) > 1 else ''})"
    return None


def require_collection(components: Components, collection: str) -> None:
    """Fail early (not once per question) when the collection is missing or incompatible."""
    components.retriever.check_collection(collection)


# results file ---------------------------------------------------------------------


def read_results(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The rows of a results file and how many lines were unreadable (a line cut by an interruption)."""
    if not path.exists():
        return [], 0
    rows, bad = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            row_key(row)
        except (json.JSONDecodeError, KeyError, TypeError):
            bad += 1
            continue
        rows.append(row)
    return rows, bad


# running --------------------------------------------------------------------------


class EvalRunner:
    """Runs every (question, spec) not yet in results.jsonl and appends one row for each.

    `on_start(total, done)` is called once with the size of the plan and how much of it
    was already done (resume); `on_row(row)` after every row written.
    """

    def __init__(
        self,
        components: Components,
        dataset: Dataset,
        collection: str,
        output_dir: str | Path,
        specs: Sequence[RunSpec],
        ks: Sequence[int] = (2, 5),
        limit: int | None = None,
        resume: bool = False,
        on_start: Callable[[int, int], None] | None = None,
        on_row: RowCallback | None = None,
        unanswerable: int = 0,
    ) -> None:
        """`unanswerable`: how many generated questions about an entity absent from the corpus to add
        (see evaluation/unanswerable.py); an agent should say it did not find their answer."""
        if not specs:
            raise DeepSearcherError("Nothing to evaluate: no agent selected.")
        if not ks or any(k < 1 for k in ks):
            raise DeepSearcherError(f"Every k of --top-k must be at least 1, got {list(ks)}.")
        if limit is not None and limit < 1:
            raise DeepSearcherError(f"--limit must be at least 1, got {limit}.")
        self.components = components
        self.dataset = dataset
        self.collection = collection
        self.output_dir = Path(output_dir)
        self.specs = list(specs)
        self.ks = sorted(set(ks))
        self.questions = dataset.questions[:limit] if limit else list(dataset.questions)
        if unanswerable:
            self.questions += unanswerable_questions(dataset, unanswerable)
        self.resume = resume
        self.on_start = on_start or (lambda total, done: None)
        self.on_row = on_row or (lambda row: None)
        self.dropped_lines = 0

    @property
    def results_path(self) -> Path:
        return self.output_dir / RESULTS_FILE

    @property
    def naive_top_k(self) -> int:
        return max(max(self.ks), NAIVE_MIN_TOP_K)

    def plan(self) -> list[tuple[RunSpec, Question]]:
        """Every (spec, question) of this evaluation, spec by spec (a finished config early)."""
        return [(spec, question) for spec in self.specs for question in self.questions]

    def run(self) -> list[dict[str, Any]]:
        """Run what is missing; returns the rows of the whole plan (earlier ones included), in plan order."""
        from deepsearcher.llm._sync import run_sync

        existing = self._prepare_file()
        plan = self.plan()
        done = {row_key(row): row for row in existing}
        todo = [(spec, question) for spec, question in plan if (question.id, spec.agent, spec.max_iter) not in done]
        self.on_start(len(plan), len(plan) - len(todo))
        if todo:
            require_collection(self.components, self.collection)
            for row in run_sync(self._run_all(todo)):
                done[row_key(row)] = row
        return [
            done[(question.id, spec.agent, spec.max_iter)]
            for spec, question in plan
            if (question.id, spec.agent, spec.max_iter) in done
        ]

    def _prepare_file(self) -> list[dict[str, Any]]:
        """Start a fresh results file, or (resume) keep its valid rows and drop a cut last line."""
        self.output_dir.mkdir(parents=True, exist_ok=True)
        if not self.resume:
            self.results_path.write_text("", encoding="utf-8")
            return []
        rows, self.dropped_lines = read_results(self.results_path)
        other = next(
            (row.get("dataset") for row in rows if row.get("dataset") not in (None, self.dataset.name)),
            None,
        )
        if other is not None:
            raise DeepSearcherError(
                f"{self.results_path} holds results of dataset '{other}', not '{self.dataset.name}': "
                "choose another --output or run without --resume."
            )
        if self.dropped_lines:
            logger.warning(
                "%s: dropped %d unreadable line(s) (an interrupted write)",
                self.results_path,
                self.dropped_lines,
            )
            temporary = self.results_path.with_suffix(".jsonl.tmp")
            temporary.write_text(
                "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                encoding="utf-8",
            )
            temporary.replace(self.results_path)
        return rows

    async def _run_all(self, todo: list[tuple[RunSpec, Question]]) -> list[dict[str, Any]]:
        rows = []
        with self.results_path.open("a", encoding="utf-8") as output:
            for spec, question in todo:
                row = await self.run_one(spec, question)
                output.write(json.dumps(row, ensure_ascii=False) + "\n")
                output.flush()
                rows.append(row)
                self.on_row(row)
        return rows

    async def run_one(self, spec: RunSpec, question: Question) -> dict[str, Any]:
        """One question under one spec, scored; an LLM or store failure becomes the row's `error`."""
        started = time.perf_counter()
        try:
            if spec.agent == RETRIEVAL:
                titles = await self._naive(question)
                return self._row(spec, question, titles, time.perf_counter() - started)
            result = await querying.ask(self._plan(spec, question))
        except DeepSearcherError as exc:
            return self._row(
                spec,
                question,
                [],
                time.perf_counter() - started,
                error=f"{type(exc).__name__}: {exc}",
            )
        titles = [found.title or found.reference for found in result.retrieved_results]
        return self._row(spec, question, titles, time.perf_counter() - started, result=result)

    async def _naive(self, question: Question) -> list[str]:
        retriever = self.components.retriever
        results = await retriever.asearch(question.question, [self.collection], top_k=self.naive_top_k)
        return [result.title or result.reference for result in results]

    def _plan(self, spec: RunSpec, question: Question) -> Any:
        """The query service's plan for one question: the spec's agent over the eval collection."""
        request = querying.QueryRequest.create(
            question=question.question, agent=spec.agent, collections=[self.collection], max_iter=spec.max_iter
        )
        return querying.plan_query(self.components, request)

    def _row(
        self,
        spec: RunSpec,
        question: Question,
        titles: list[str],
        seconds: float,
        result: Any = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        gold = list(question.gold_titles)
        unanswerable = question.id.startswith(UNANSWERABLE_PREFIX)
        row: dict[str, Any] = {
            "id": question.id,
            "agent": spec.agent,
            "max_iter": spec.max_iter,
            "dataset": self.dataset.name,
            "question": question.question,
            "gold_titles": gold,
            "retrieved_titles": titles,
            "recall": {str(k): recall_at_k(titles, gold, k) for k in self.ks},
            "all_found": all_found(titles, gold),
            "gold_answer": question.answer,
            "answer_aliases": list(question.answer_aliases),
            "answer": None,
            "unanswerable": unanswerable,
            "short_answer": None,
            "accuracy": None,
            "abstained": None,
            "citation_precision": None,
            "citation_support": None,
            "em": None,
            "f1": None,
            "tokens": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "llm_calls": 0,
            "usage_by_step": {},
            "wall_seconds": round(seconds, 4),
            "error": error,
        }
        if result is not None:
            answer = result.short_answer or strip_citations(result.answer)  # EM/F1 on the concise answer
            usage = result.usage
            cited = [source.text for source in result.sources if source.cited]
            row.update(
                answer=result.answer,
                short_answer=result.short_answer,
                abstained=is_abstention(result.short_answer) if result.short_answer else result.abstained,
                accuracy=None if unanswerable else answer_correct(answer, question.answers, question.question),
                citation_precision=None if unanswerable else citation_precision(cited, question.answers),
                citation_support=citation_support(cited, result.short_answer),
                em=None if unanswerable else exact_match(answer, question.answers),
                f1=None if unanswerable else token_f1(answer, question.answers),
                tokens=usage.total_tokens,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                llm_calls=usage.calls,
                usage_by_step={step: step_usage.to_dict() for step, step_usage in result.usage_by_step.items()},
            )
        elif error is not None and spec.agent != RETRIEVAL:
            # A failed question scores 0; its usage is unknown (the agent's run did not return).
            row.update(
                em=0.0,
                f1=0.0,
                tokens=None,
                prompt_tokens=None,
                completion_tokens=None,
                llm_calls=None,
            )
        return row
