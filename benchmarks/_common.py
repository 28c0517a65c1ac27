"""Shared helpers for the benchmarks: dataset files, title recall, tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "data" / "hotpotqa_train100"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@dataclass
class Question:
    id: str
    question: str
    gold_titles: list[str]
    answer: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Dataset:
    name: str
    passages: list[dict[str, str]]  # {"title": ..., "text": ...}
    questions: list[Question]


def load_dataset(
    directory: str | Path, limit: int | None = None, questions_file: str | Path | None = None, skip: int = 0
) -> Dataset:
    """A dataset directory holds corpus.jsonl ({title, text}) and questions.jsonl
    ({id, question, gold_titles, answer, ...}); `questions_file` replaces the latter (a corpus
    shared without questions, such as 2wiki_corpus, with questions of our own). `skip` and
    `limit` select questions skip .. skip + limit (a tuning half and a reporting half)."""
    directory = Path(directory)
    corpus_path = directory / "corpus.jsonl"
    questions_path = Path(questions_file) if questions_file else directory / "questions.jsonl"
    for path in (corpus_path, questions_path):
        if not path.is_file():
            raise SystemExit(f"{path} not found: a dataset directory needs corpus.jsonl and questions.jsonl")
    passages = [
        {"title": str(row.get("title") or ""), "text": str(row.get("text") or "")} for row in read_jsonl(corpus_path)
    ]
    questions = []
    for row in read_jsonl(questions_path):
        known = {"id", "question", "gold_titles", "answer"}
        questions.append(
            Question(
                id=str(row.get("id", len(questions))),
                question=row["question"],
                gold_titles=list(row.get("gold_titles") or []),
                answer=str(row.get("answer") or ""),
                extra={k: v for k, v in row.items() if k not in known},
            )
        )
    questions = questions[skip : skip + limit if limit else None]
    name = f"{directory.name}+{questions_path.stem}" if questions_file else directory.name
    if skip or limit:
        name += f"[{skip}:{skip + len(questions)}]"
    return Dataset(name=name, passages=passages, questions=questions)


def distinct(titles: Iterable[str | None]) -> list[str]:
    """Titles in rank order, each once (several passages may share a title)."""
    seen: set[str] = set()
    ordered = []
    for title in titles:
        if title and title not in seen:
            seen.add(title)
            ordered.append(title)
    return ordered


def recall_at_k(retrieved_titles: Sequence[str | None], gold_titles: Sequence[str], k: int) -> float:
    """Share of the gold titles found among the first k distinct retrieved titles."""
    gold = set(gold_titles)
    if not gold:
        return 0.0
    top = set(distinct(retrieved_titles)[:k])
    return len(gold & top) / len(gold)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table; floats get three decimals."""

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    cells = [[cell(v) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[i], (int, float)) or _numeric(str(row[i])) for row in rows) for i in range(len(headers))
    ]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h)) for i, h in enumerate(headers)]
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=False))
    out = [line, "  ".join("-" * w for w in widths)]
    for row in cells:
        out.append(
            "  ".join(
                v.rjust(w) if numeric[i] else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths, strict=False))
            )
        )
    return "\n".join(out)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_int_list(text: str) -> list[int]:
    return [int(part) for part in str(text).split(",") if part.strip()]
