"""An evaluation dataset: DATASET_DIR/questions.jsonl and DATASET_DIR/corpus.jsonl.

questions.jsonl, one object a line:
    {"id": "...", "question": "...", "answer": "...", "gold_titles": ["...", ...],
     "answer_aliases": ["...", ...]}            # answer_aliases is optional
corpus.jsonl, one passage a line:
    {"title": "...", "text": "..."}

Every problem is reported with the file and the 1-based line, so a broken dataset is
fixed in one look instead of failing half way through an evaluation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepsearcher.types.errors import DeepSearcherError
from deepsearcher.utils.bounded_json import InputLimitError, check_depth

__all__ = [
    "Dataset",
    "DatasetError",
    "Passage",
    "Question",
    "load_dataset",
    "read_corpus",
    "read_questions",
]

QUESTIONS_FILE = "questions.jsonl"
CORPUS_FILE = "corpus.jsonl"


class DatasetError(DeepSearcherError):
    """A dataset file is missing or malformed; the message names the file and line."""

    http_status = 400

    def __init__(self, path: Path | str, reason: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    gold_titles: tuple[str, ...]
    answer_aliases: tuple[str, ...] = ()

    @property
    def answers(self) -> list[str]:
        """The answer first, then its aliases: EM and F1 take the best over these."""
        return [self.answer, *self.answer_aliases]


@dataclass(frozen=True)
class Passage:
    title: str
    text: str


@dataclass
class Dataset:
    """A dataset directory with its questions read and checked (the corpus is read on demand)."""

    directory: Path
    questions: list[Question] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def questions_path(self) -> Path:
        return self.directory / QUESTIONS_FILE

    @property
    def corpus_path(self) -> Path:
        return self.directory / CORPUS_FILE

    def corpus(self) -> list[Passage]:
        return read_corpus(self.corpus_path)

    def missing_gold_titles(self, passages: list[Passage] | None = None) -> dict[str, list[str]]:
        """Question id → gold titles that no corpus passage has (such questions can never reach recall 1)."""
        titles = {passage.title for passage in (passages if passages is not None else self.corpus())}
        missing = {}
        for question in self.questions:
            absent = [title for title in question.gold_titles if title not in titles]
            if absent:
                missing[question.id] = absent
        return missing


def load_dataset(directory: str | Path) -> Dataset:
    """Read and check DATASET_DIR/questions.jsonl; check that corpus.jsonl is there."""
    directory = Path(directory).expanduser().absolute()
    if not directory.is_dir():
        raise DatasetError(
            directory,
            "no such dataset directory (expected a folder with questions.jsonl and corpus.jsonl)",
        )
    for name in (QUESTIONS_FILE, CORPUS_FILE):
        if not (directory / name).is_file():
            raise DatasetError(
                directory / name,
                "missing: a dataset folder holds questions.jsonl and corpus.jsonl",
            )
    return Dataset(directory=directory, questions=read_questions(directory / QUESTIONS_FILE))


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; malformed lines raise DatasetError."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise DatasetError(path, f"cannot read: {exc.strerror or exc}") from exc
    found = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            check_depth(line, "the record")
            record = json.loads(line)
        except InputLimitError as exc:
            raise DatasetError(path, str(exc), number) from None
        except json.JSONDecodeError as exc:
            raise DatasetError(path, f"malformed JSON at column {exc.colno}: {exc.msg}", number) from exc
        if not isinstance(record, dict):
            raise DatasetError(
                path,
                f"expected a JSON object, got a JSON {type(record).__name__}",
                number,
            )
        found = True
        yield number, record
    if not found:
        raise DatasetError(path, "empty: no records")


def _string(path: Path, number: int, record: dict[str, Any], key: str) -> str:
    if key not in record:
        raise DatasetError(path, f"missing key '{key}' (keys: {', '.join(record) or 'none'})", number)
    value = record[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # numeric ids and answers ("1998") are fine
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(
            path,
            f"'{key}' must be a non-empty string, got {json.dumps(value)[:80]}",
            number,
        )
    return value.strip()


def _strings(path: Path, number: int, record: dict[str, Any], key: str, required: bool) -> tuple[str, ...]:
    if key not in record or (record[key] is None and not required):
        if required:
            raise DatasetError(
                path,
                f"missing key '{key}' (keys: {', '.join(record) or 'none'})",
                number,
            )
        return ()
    value = record[key]
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise DatasetError(
            path,
            f"'{key}' must be a list of non-empty strings, got {json.dumps(value)[:80]}",
            number,
        )
    if required and not value:
        raise DatasetError(path, f"'{key}' is empty: a question needs at least one", number)
    return tuple(dict.fromkeys(item.strip() for item in value))


def read_questions(path: str | Path) -> list[Question]:
    path = Path(path)
    questions: list[Question] = []
    first_line: dict[str, int] = {}
    for number, record in _records(path):
        question_id = _string(path, number, record, "id")
        if question_id in first_line:
            raise DatasetError(
                path,
                f"duplicate id '{question_id}' (first on line {first_line[question_id]})",
                number,
            )
        first_line[question_id] = number
        questions.append(
            Question(
                id=question_id,
                question=_string(path, number, record, "question"),
                answer=_string(path, number, record, "answer"),
                gold_titles=_strings(path, number, record, "gold_titles", required=True),
                answer_aliases=_strings(path, number, record, "answer_aliases", required=False),
            )
        )
    return questions


def read_corpus(path: str | Path) -> list[Passage]:
    path = Path(path)
    passages = []
    for number, record in _records(path):
        title = _string(path, number, record, "title")
        text = record.get("text")
        if isinstance(text, list) and all(isinstance(item, str) for item in text):
            text = "\n".join(text)  # sentence lists, as the loader joins them
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(
                path,
                f"'text' must be a non-empty string, got {json.dumps(text)[:80]}",
                number,
            )
        passages.append(Passage(title=title, text=text))
    return passages


def collection_name_for(dataset: Dataset | str | Path) -> str:
    """The collection an evaluation corpus loads into: `eval_<dataset dir name>`."""
    name = dataset.name if isinstance(dataset, Dataset) else Path(dataset).expanduser().absolute().name
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", name).strip("_") or "dataset"
    return f"eval_{cleaned}"[:255]
