"""Evaluation datasets: what is read, and errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepsearcher.evaluation.dataset import DatasetError, collection_name_for, load_dataset, read_corpus, read_questions


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def good_question(**changes) -> str:
    record = {"id": "q1", "question": "Who?", "answer": "Ada", "gold_titles": ["A", "B"]}
    record.update(changes)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


def test_reads_questions_with_aliases_and_blank_lines(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "questions.jsonl",
        good_question(answer_aliases=["Ada L.", " Ada L. "]),
        "",
        good_question(id=7, answer=1998, gold_titles=["C"]),
    )
    first, second = read_questions(path)
    assert first.answers == ["Ada", "Ada L."] and first.gold_titles == ("A", "B")
    assert second.id == "7" and second.answer == "1998" and second.answer_aliases == ()


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "malformed JSON at column 2"),
        ("[1, 2]", "expected a JSON object, got a JSON list"),
        (good_question(answer=...), "missing key 'answer'"),
        (good_question(question="  "), "'question' must be a non-empty string"),
        (good_question(gold_titles=[]), "'gold_titles' is empty"),
        (good_question(gold_titles="A"), "'gold_titles' must be a list of non-empty strings"),
        (good_question(answer_aliases=[1]), "'answer_aliases' must be a list of non-empty strings"),
        (good_question(id="q0"), "duplicate id 'q0' (first on line 1)"),
    ],
)
def test_question_errors_name_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    path = write_lines(tmp_path / "questions.jsonl", good_question(id="q0"), line)
    with pytest.raises(DatasetError) as caught:
        read_questions(path)
    assert str(caught.value).startswith(f"{path}, line 2: ")
    assert reason in str(caught.value)
    assert caught.value.line == 2


def test_corpus_errors_and_sentence_lists(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "corpus.jsonl", json.dumps({"title": "A", "text": ["One.", "Two."]}))
    assert read_corpus(path)[0].text == "One.\nTwo."
    write_lines(path, json.dumps({"title": "A", "text": "x"}), json.dumps({"title": "B"}))
    with pytest.raises(DatasetError, match=r"corpus\.jsonl, line 2: 'text' must be a non-empty string"):
        read_corpus(path)
    path.write_text("\n\n")
    with pytest.raises(DatasetError, match="empty: no records"):
        read_corpus(path)


def test_dataset_folder_checks_and_collection_name(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such dataset directory"):
        load_dataset(tmp_path / "nope")
    folder = tmp_path / "my-data.v1"
    folder.mkdir()
    write_lines(folder / "questions.jsonl", good_question(gold_titles=["A", "Z"]))
    with pytest.raises(DatasetError, match=r"corpus\.jsonl: missing"):
        load_dataset(folder)
    write_lines(folder / "corpus.jsonl", json.dumps({"title": "A", "text": "a"}))
    dataset = load_dataset(folder)
    assert dataset.name == "my-data.v1" and len(dataset.questions) == 1
    assert dataset.missing_gold_titles() == {"q1": ["Z"]}
    assert collection_name_for(dataset) == "eval_my_data_v1"
    assert collection_name_for("/work/shared/data/hotpotqa_train100") == "eval_hotpotqa_train100"
