"""`deepsearcher query` and the online_query functions against the scripted LLM server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from helpers import make_docs
from typer.testing import CliRunner

from deepsearcher import configuration
from deepsearcher.cli.main import app
from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="NO")
runner = CliRunner()


def write_config(path: Path, server, milvus_uri: str) -> Path:
    settings = {
        "provide_settings": {
            "llm": server.llm_config(retry_base_delay=0.01),
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
        }
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str, server) -> Path:
    path = write_config(tmp_path / "config.yaml", server, milvus_uri)
    docs = make_docs(tmp_path / "docs")
    assert runner.invoke(app, ["load", str(docs), "--collection-name", "science", "-c", str(path)]).exit_code == 0
    return path


def cite(request) -> str:
    match = re.search(r"\[(\d+)\] \(Grace Hopper\)", request.last_user_message)
    return f"Grace Hopper built it [{match.group(1)}]." if match else "Not found."


def test_query_json_returns_the_result_object(server, config_file: Path) -> None:
    server.on("Answer the question using only the numbered sources", cite)
    result = runner.invoke(
        app,
        [
            "query",
            "Who built the first compiler?",
            "--agent",
            "naive",
            "--collection",
            "science",
            "-c",
            str(config_file),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["agent"] == "NaiveRAG"
    assert data["answer"].startswith("Grace Hopper built it [")
    cited = [s for s in data["sources"] if s["cited"]]
    assert cited[0]["title"] == "Grace Hopper" and cited[0]["reference"].endswith("records.jsonl")
    assert data["usage"]["calls"] == 2 and data["usage"]["total_tokens"] > 0  # the answer's extraction, the answer
    assert [step["kind"] for step in data["steps"]] == ["collections", "search", "answer"]


def test_query_shows_steps_answer_and_sources(server, config_file: Path) -> None:
    server.on("Break the question below", '["first compiler"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on("These queries were already searched", "[]")
    server.on("Answer the question using only the numbered sources", cite)
    result = runner.invoke(
        app, ["query", "Who built the first compiler?", "--agent", "deep", "--max-iter", "1", "-c", str(config_file)]
    )
    assert result.exit_code == 0, result.output
    assert "sub-questions: 1 question to research: first compiler" in result.output
    assert "Grace Hopper built it" in result.output and "Sources" in result.output and "records.jsonl" in result.output


def test_online_query_keeps_deepsearchers_tuple(server, config_file: Path) -> None:
    from deepsearcher.config import Configuration
    from deepsearcher.online_query import naive_rag_query, query

    configuration.init_config(Configuration(config_file))
    server.on("You route a question", "1")
    server.on("Break the question below", '["first compiler"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on("Answer the question using only the numbered sources", cite)
    answer, retrieved, tokens = query("Who built the first compiler?", max_iter=1)
    assert answer.startswith("Grace Hopper") and tokens > 0
    assert retrieved and all("Hopper" in r.text for r in retrieved)
    naive_answer, naive_results = naive_rag_query("Who built the first compiler?", collection="science")
    assert naive_answer.startswith("Grace Hopper") and len(naive_results) == 4


def test_query_settings_choose_the_default_agent_and_budget(server, config_file: Path) -> None:
    settings = yaml.safe_load(config_file.read_text())
    settings["query_settings"] = {"agent": "deep", "max_tokens": 1, "max_iter": 3}
    config_file.write_text(yaml.safe_dump(settings), encoding="utf-8")
    server.on("Break the question below", '["first compiler"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on("These queries were already searched", '["more"]')
    server.on("Answer the question using only the numbered sources", cite)
    result = runner.invoke(
        app, ["query", "Who built the first compiler?", "--collection", "science", "-c", str(config_file), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["agent"] == "DeepSearch"  # from query_settings.agent, no --agent given
    assert data["stopped_by_budget"] is True  # query_settings.max_tokens applied
    assert {step.get("iteration") for step in data["steps"] if step["kind"] == "search"} == {1}


def test_a_query_with_nothing_loaded_is_an_error_not_an_answer(server, tmp_path: Path, milvus_uri: str) -> None:
    path = write_config(tmp_path / "empty.yaml", server, milvus_uri)
    for agent in ("deep", "naive", "chain"):
        result = runner.invoke(app, ["query", "Who built the first compiler?", "--agent", agent, "-c", str(path)])
        assert result.exit_code == 1, result.output
        assert "Nothing to search" in result.output and "deepsearcher load" in result.output
    assert server.call_count == 0  # no LLM call: nothing would ground its answer


def test_query_timeout_option_ends_a_hung_query_clearly(server, config_file: Path) -> None:
    import time

    from deepsearcher.testing.scripted_llm import Reply

    server.on("Answer the question using only the numbered sources", Reply("late", latency=10))
    started = time.monotonic()
    result = runner.invoke(
        app,
        [
            "query",
            "Who built it?",
            "--agent",
            "naive",
            "--collection",
            "science",
            "--timeout",
            "1",
            "-c",
            str(config_file),
        ],
    )
    # the query ended without waiting for the model's 10 s reply (a looser bound than the 1 s
    # deadline plus start-up: under a loaded CI box start-up alone once took over 4 s)
    assert time.monotonic() - started < 9
    assert result.exit_code == 1 and "within its 1 s deadline: step 'answer'" in " ".join(result.stderr.split())
