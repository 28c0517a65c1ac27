"""`deepsearcher eval` end to end on a tiny dataset: load, naive retrieval, scores, outputs, resume,
and the agents against the scripted LLM server (tokens, LLM calls, a failing question)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from helpers import components_for, write_config
from typer.testing import CliRunner

from deepsearcher.cli.main import app

runner = CliRunner()

PASSAGES = [
    ("Krafla", "The Krafla caldera erupted nine times between 1975 and 1984, an episode known as the Krafla Fires."),
    ("Iceland", "Iceland is a Nordic island country in the North Atlantic; its capital is Reykjavik."),
    ("Grace Hopper", "Grace Hopper built the first compiler, the A-0 system, in 1952."),
    ("Ada Lovelace", "Ada Lovelace wrote the first published algorithm, intended for Babbage's Analytical Engine."),
    ("Charles Babbage", "Charles Babbage designed the Analytical Engine, a mechanical general-purpose computer."),
    ("Sourdough", "Sourdough bread rises because wild yeast and lactobacilli in the starter ferment the flour."),
]

QUESTIONS = [
    {
        "id": "q1",
        "question": "Who built the first compiler, the A-0 system?",
        "answer": "Grace Hopper",
        "gold_titles": ["Grace Hopper"],
    },
    {
        "id": "q2",
        "question": "Why does sourdough bread rise?",
        "answer": "wild yeast",
        "answer_aliases": ["yeast"],
        "gold_titles": ["Sourdough", "Baking"],
    },
    {
        "id": "q3",
        "question": "When did the Krafla caldera erupt, and who designed the Analytical Engine?",
        "answer": "1975 to 1984",
        "gold_titles": ["Krafla", "Charles Babbage", "Ada Lovelace", "Grace Hopper"],
    },
]


def make_dataset(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in PASSAGES), encoding="utf-8"
    )
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return folder


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # naive evaluation needs no LLM
    return write_config(tmp_path / "config.yaml", milvus_uri)


def invoke(*args: str):
    return runner.invoke(app, ["eval", *args])


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def hand_recall(titles: list[str], gold: list[str], k: int) -> float:
    distinct = list(dict.fromkeys(titles))[:k]
    return len(set(gold) & set(distinct)) / len(set(gold))


def is_png(path: Path) -> bool:
    return path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 1000


def test_naive_eval_end_to_end(tmp_path: Path, config_file: Path, milvus_uri: str) -> None:
    data = make_dataset(tmp_path / "tiny_qa")
    out = tmp_path / "out"
    result = invoke(str(data), "--agent", "naive", "--top-k", "1,2,6", "--output", str(out), "-c", str(config_file))
    assert result.exit_code == 0, result.output
    assert "Evaluation store:" in result.output  # its own store, beside the configured one
    own, user = (
        Path(milvus_uri).with_name(Path(milvus_uri).stem + "-eval.db"),
        components_for(config_file, skip=("llm",)),
    )
    try:
        assert own.exists() and not [info.collection_name for info in user.vector_db.list_collections()]
    finally:
        user.close()

    rows = read_rows(out / "results.jsonl")
    assert [(r["id"], r["agent"], r["max_iter"]) for r in rows] == [
        ("q1", "naive", None),
        ("q2", "naive", None),
        ("q3", "naive", None),
    ]
    by_id = {r["id"]: r for r in rows}
    for row in rows:
        # One passage, one chunk: all 6 titles come back (naive top_k is at least 10), each once.
        assert sorted(row["retrieved_titles"]) == sorted(t for t, _ in PASSAGES)
        assert row["all_found"] is (row["id"] != "q2")  # q2 has a gold title the corpus lacks
        assert row["tokens"] == 0 and row["llm_calls"] == 0 and row["answer"] is None and row["em"] is None
        assert row["error"] is None and row["wall_seconds"] >= 0
        for k in (1, 2, 6):
            assert row["recall"][str(k)] == pytest.approx(hand_recall(row["retrieved_titles"], row["gold_titles"], k))

    # The clear best matches, by hand: q1's passage names the A-0 compiler; q2's names sourdough.
    assert by_id["q1"]["retrieved_titles"][0] == "Grace Hopper"
    assert by_id["q2"]["retrieved_titles"][0] == "Sourdough"
    assert by_id["q1"]["recall"] == {"1": 1.0, "2": 1.0, "6": 1.0}
    # q2: gold {Sourdough, Baking}; Sourdough is first, "Baking" is not in the corpus: 1/2 at every k.
    assert by_id["q2"]["recall"] == {"1": 0.5, "2": 0.5, "6": 0.5}
    # q3: 4 gold titles; at k=1 one of them (Krafla or Babbage) is first → 1/4; k=6 → 4/4.
    assert by_id["q3"]["retrieved_titles"][0] in ("Krafla", "Charles Babbage")
    assert by_id["q3"]["recall"]["1"] == 0.25 and by_id["q3"]["recall"]["6"] == 1.0

    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset"] == "tiny_qa" and summary["collection"] == "eval_tiny_qa" and summary["ks"] == [1, 2, 6]
    (group,) = summary["groups"]
    assert group["agent"] == "naive" and group["max_iter"] is None and group["n"] == 3 and group["failures"] == 0
    assert group["recall"]["1"] == pytest.approx((1.0 + 0.5 + 0.25) / 3)
    assert group["recall"]["6"] == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    mean_r2 = sum(by_id[q]["recall"]["2"] for q in by_id) / 3
    assert group["recall"]["2"] == pytest.approx(mean_r2)
    assert group["all_found"] == pytest.approx(2 / 3)
    assert group["em"] is None and group["f1"] is None and group["mean_tokens"] == 0 and group["mean_llm_calls"] == 0

    markdown = (out / "summary.md").read_text()
    assert (
        "| agent | max_iter | n | Recall@1 | Recall@2 | Recall@6 | all found | accuracy | abstention | cite precision | cite support | EM | F1 | mean tokens | mean LLM calls | mean wall s | failures |"  # noqa: E501 - a literal read better whole
        in markdown
    )
    assert re.search(
        r"\| naive \| – \| 3 \| 0\.583 \| [01]\.\d{3} \| 0\.833 \| 0\.667 \| – \| – \| – \| – \| – \| – \| 0\.0 \| 0\.00 \| \d+\.\d{3} \| 0 \|",  # noqa: E501 - a literal read better whole
        markdown,
    ), markdown
    assert is_png(out / "recall_vs_max_iter.png") and is_png(out / "tokens_vs_max_iter.png")
    assert "| naive | – | 3 | 0.583 |" in result.stdout  # the printed table
    assert "1 question(s) have gold titles not in the corpus (e.g. q2: 'Baking')" in result.output.replace("\n", "")

    # A second run finds the corpus unchanged and embeds nothing; --skip-load uses the collection as is.
    again = invoke(str(data), "--output", str(out), "--top-k", "1", "-c", str(config_file))
    assert again.exit_code == 0, again.output
    assert "Corpus unchanged" in again.output
    skipped = invoke(str(data), "--skip-load", "--output", str(out), "--top-k", "1", "-c", str(config_file))
    assert skipped.exit_code == 0 and "--skip-load" in skipped.output
    assert json.loads((out / "summary.json").read_text())["groups"][0]["recall"] == {"1": pytest.approx(1.75 / 3)}


def test_without_matplotlib_eval_writes_everything_else_and_exits_0(
    tmp_path: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # matplotlib is installed here (dev extra); a None entry in sys.modules makes its import
    # fail exactly as on an install without it — the one thing this test cannot have for real.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    data = make_dataset(tmp_path / "tiny_qa")
    out = tmp_path / "out"
    result = invoke(str(data), "--agent", "naive", "--output", str(out), "-c", str(config_file))
    assert result.exit_code == 0, result.output
    assert (out / "results.jsonl").is_file() and (out / "summary.json").is_file() and (out / "summary.md").is_file()
    assert not (out / "recall_vs_max_iter.png").exists()
    assert "pip install 'deepsearcher[eval]'" in result.output.replace("\n", "")  # brackets shown, not eaten as markup


def test_skip_load_without_collection_and_bad_options(tmp_path: Path, config_file: Path) -> None:
    data = make_dataset(tmp_path / "never_loaded")
    missing = invoke(str(data), "--skip-load", "--output", str(tmp_path / "out"), "-c", str(config_file))
    assert missing.exit_code == 1 and "eval_never_loaded" in missing.output and "does not exist" in missing.output
    assert invoke(str(data), "--agent", "smart", "-c", str(config_file)).exit_code == 2
    assert invoke(str(data), "--top-k", "0,2", "-c", str(config_file)).exit_code == 2
    no_llm = invoke(str(data), "--agent", "deep", "-c", str(config_file))
    assert no_llm.exit_code == 1 and "--agent naive needs no LLM" in no_llm.output
    broken = tmp_path / "broken"
    make_dataset(broken)
    (broken / "questions.jsonl").write_text(
        '{"id": "a", "question": "q?", "answer": "x", "gold_titles": ["A"]}\n{"id": "b", "question": "q?"}\n'
    )
    bad = invoke(str(broken), "-c", str(config_file))
    assert bad.exit_code == 1 and "questions.jsonl, line 2: missing key 'answer'" in bad.output.replace("\n", "")


def test_resume_runs_only_the_missing_questions(tmp_path: Path, config_file: Path) -> None:
    data = make_dataset(tmp_path / "tiny_qa")
    out = tmp_path / "out"
    first = invoke(str(data), "--limit", "2", "--output", str(out), "-c", str(config_file))
    assert first.exit_code == 0, first.output
    before = read_rows(out / "results.jsonl")
    assert [r["id"] for r in before] == ["q1", "q2"]
    assert json.loads((out / "summary.json").read_text())["groups"][0]["n"] == 2

    # An interrupted write leaves half a line: resume drops it and carries on.
    with (out / "results.jsonl").open("a") as handle:
        handle.write('{"id": "q3", "agent": "nai')
    resumed = invoke(str(data), "--resume", "--output", str(out), "-c", str(config_file))
    assert resumed.exit_code == 0, resumed.output
    assert "Resuming: 2 of 3 already done" in resumed.output
    assert "Dropped 1 unreadable line" in resumed.output
    after = read_rows(out / "results.jsonl")
    assert [r["id"] for r in after] == ["q1", "q2", "q3"]
    assert after[:2] == before  # q1 and q2 were not run again (same wall time, same everything)
    assert json.loads((out / "summary.json").read_text())["groups"][0]["n"] == 3

    nothing_left = invoke(str(data), "--resume", "--output", str(out), "-c", str(config_file))
    assert nothing_left.exit_code == 0 and "Resuming: 3 of 3 already done" in nothing_left.output
    assert read_rows(out / "results.jsonl") == after


# --------------------------------------------------------------------------- agents, scripted LLM

ANSWERS = {"first compiler": "Grace Hopper [1]", "Krafla": "between 1975 and 1984 [1]"}


def _question_in(request) -> str:
    match = re.search(r"Question: (.*)", request.last_user_message)
    return match.group(1).strip() if match else ""


def _final_answer(request) -> str:
    question = _question_in(request)
    return next((answer for key, answer in ANSWERS.items() if key in question), "I do not know.")


def script(server) -> None:
    """Plausible replies to every agent prompt; any call about sourdough (q2) fails with a 500."""
    from deepsearcher.testing import Fail

    server.on(r"Why does sourdough bread rise", Fail.server_error(500, "scripted outage"), where="any")
    server.on(r"Break the question below", lambda request: json.dumps([_question_in(request)]))
    server.on(r"Does the passage below contain", "YES")
    server.on(r"You are researching a question", "[]")
    server.on(r"You answer a complex question step by step", _question_in)
    server.on(r"Answer the question using only the passages below", "See the first passage.")
    server.on(r"Which passages support", "[0]")
    server.on(r"Answer the question using (only the numbered sources|the step-by-step findings)", _final_answer)


def test_agents_record_usage_and_survive_a_failing_question(
    tmp_path: Path, milvus_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deepsearcher.testing import ScriptedLLMServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = make_dataset(tmp_path / "tiny_qa")
    out = tmp_path / "out"
    with ScriptedLLMServer() as server:
        script(server)
        llm = (
            '  llm:\n    provider: "OpenAI"\n    config:\n      model: "scripted-model"\n'
            f'      api_key: "test"\n      base_url: "{server.url}/v1"\n      max_retries: 0\n'
        )
        config_file = write_config(tmp_path / "config.yaml", milvus_uri, extra=llm)
        result = invoke(
            str(data),
            "--agent",
            "deep,chain",
            "--max-iter",
            "1,2",
            "--top-k",
            "1,5",
            "--output",
            str(out),
            "-c",
            str(config_file),
        )
        calls_seen = server.call_count

    assert result.exit_code == 0, result.output
    rows = read_rows(out / "results.jsonl")
    assert [(r["agent"], r["max_iter"]) for r in rows[::3]] == [("deep", 1), ("deep", 2), ("chain", 1), ("chain", 2)]
    assert len(rows) == 12

    failed = [r for r in rows if r["error"]]
    assert [r["id"] for r in failed] == ["q2"] * 4
    for row in failed:
        assert row["error"].startswith("LLMError: ") and "500" in row["error"]
        assert row["em"] == 0.0 and row["f1"] == 0.0 and row["tokens"] is None and row["llm_calls"] is None
        assert row["recall"] == {"1": 0.0, "5": 0.0} and row["all_found"] is False

    ok = [r for r in rows if not r["error"]]
    for row in ok:
        assert row["tokens"] > 0 and row["tokens"] == sum(
            step["total_tokens"] for step in row["usage_by_step"].values()
        )
        assert row["llm_calls"] == sum(step["calls"] for step in row["usage_by_step"].values())
    # Every successful call is counted in some row; the 4 failed runs made one call each (no retries).
    assert sum(r["llm_calls"] for r in ok) + len(failed) == calls_seen

    by_key = {(r["id"], r["agent"], r["max_iter"]): r for r in rows}
    # ChainOfRAG, per hop: follow-up, intermediate answer, supporting docs; then the answer's
    # extraction (agent/extract.py) and the final answer.
    assert by_key[("q1", "chain", 1)]["llm_calls"] == 5
    assert by_key[("q1", "chain", 2)]["llm_calls"] == 8
    # DeepSearch: sub-queries, one judgement per retrieved chunk (top_k 5), extraction, the answer; at max_iter 2 also
    # the reflection, and round 2 searches a name the kept passage gives (deepsearcher.graph's follow-up
    # queries) though reflection asked for nothing: the one chunk it finds that was not judged yet is judged.
    assert by_key[("q1", "deep", 1)]["llm_calls"] == 1 + 5 + 2
    assert by_key[("q1", "deep", 2)]["llm_calls"] == 1 + 5 + 1 + 1 + 2
    # Answers: citations stripped, then normalised.
    q1, q3 = by_key[("q1", "chain", 1)], by_key[("q3", "chain", 1)]
    assert q1["answer"] == "Grace Hopper [1]" and q1["em"] == 1.0 and q1["f1"] == 1.0
    # "between 1975 and 1984" vs "1975 to 1984": 2 common tokens, P = 2/4, R = 2/3 → F1 = 4/7.
    assert q3["em"] == 0.0 and q3["f1"] == pytest.approx(4 / 7)
    assert q1["retrieved_titles"] == ["Grace Hopper"] and q1["recall"] == {"1": 1.0, "5": 1.0}

    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures"] == 4
    groups = {(g["agent"], g["max_iter"]): g for g in summary["groups"]}
    assert set(groups) == {("deep", 1), ("deep", 2), ("chain", 1), ("chain", 2)}
    chain1 = groups[("chain", 1)]
    assert chain1["n"] == 3 and chain1["failures"] == 1
    assert chain1["em"] == pytest.approx(1 / 3) and chain1["f1"] == pytest.approx((1 + 0 + 4 / 7) / 3)
    assert chain1["mean_llm_calls"] == 5.0  # over the two questions that finished
    assert "| chain | 1 | 3 |" in (out / "summary.md").read_text()
    assert "4 question run(s) failed" in result.output
    assert is_png(out / "recall_vs_max_iter.png") and is_png(out / "tokens_vs_max_iter.png")
