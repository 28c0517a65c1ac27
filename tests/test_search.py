"""The search use case: every loaded collection by default, the passage that matches, weak matches marked.

Real files in a real Milvus Lite store, searched with the bundled model; the CLI is the front-end
here (test_frontends checks that REST and MCP answer the same).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import components_for, make_docs
from typer.testing import CliRunner

from deepsearcher.app.searching import SearchRequest, best_passage, search
from deepsearcher.cli.main import app
from deepsearcher.types.errors import BadInputError

runner = CliRunner()


def write_settings(tmp_path: Path, **query_settings: object) -> Path:
    path = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}}},
        "query_settings": query_settings,
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = write_settings(tmp_path)
    docs = make_docs(tmp_path / "docs")
    for collection in ("science", "kitchen"):
        loaded = runner.invoke(app, ["load", str(docs), "--collection", collection, "-c", str(path)])
        assert loaded.exit_code == 0, loaded.output
    return path


def cli_search(config_file: Path, text: str, *extra: str) -> dict:
    result = runner.invoke(app, ["search", text, "-c", str(config_file), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_no_collection_named_searches_every_loaded_one_and_shows_each_hit_once(config_file: Path) -> None:
    response = cli_search(config_file, "who built the first compiler", "-k", "3")
    assert sorted(response["collections"]) == ["kitchen", "science"]
    results = response["results"]
    assert results[0]["title"] == "Grace Hopper" and not results[0]["weak"]
    assert len({hit["text"] for hit in results}) == len(results) == 3  # the same chunk in both collections: once
    one = cli_search(config_file, "who built the first compiler", "--collection", "kitchen")
    assert one["collections"] == ["kitchen"] and {hit["collection"] for hit in one["results"]} == {"kitchen"}


def test_a_question_the_store_knows_nothing_about_is_marked_weak(config_file: Path) -> None:
    relevant = cli_search(config_file, "Krafla caldera eruptions in Iceland")["results"][0]
    assert relevant["title"] == "Volcanoes" and "Krafla" in relevant["text"]
    assert relevant["similarity"] > 0.5 and relevant["weak"] is False
    unrelated = cli_search(config_file, "how do I edit my crontab")["results"]
    assert unrelated and all(hit["weak"] for hit in unrelated)
    assert all(hit["similarity"] < 0.4 for hit in unrelated)

    shown = runner.invoke(app, ["search", "how do I edit my crontab", "-c", str(config_file)])
    assert shown.exit_code == 0 and "weak match" in shown.stdout and "Only weak matches" in shown.stdout


def test_the_relevance_floor_is_a_setting(tmp_path: Path, config_file: Path) -> None:
    strict = write_settings(tmp_path, relevance_floor=0.99)
    assert all(hit["weak"] for hit in cli_search(strict, "who built the first compiler")["results"])
    lenient = write_settings(tmp_path, relevance_floor=-1)
    assert not any(hit["weak"] for hit in cli_search(lenient, "how do I edit my crontab")["results"])
    wrong = write_settings(tmp_path, relevance_floor=3)
    refused = runner.invoke(app, ["search", "x", "-c", str(wrong)])
    assert refused.exit_code == 1 and "relevance_floor" in refused.output


def test_search_requests_are_checked(config_file: Path) -> None:
    components = components_for(config_file, skip=("llm",))
    try:
        with pytest.raises(BadInputError, match="empty"):
            search(components, SearchRequest.create(query="  "))
        with pytest.raises(BadInputError, match="top_k must be between 1 and 100"):
            search(components, SearchRequest.create(query="x", top_k=0))
    finally:
        components.close()


LONG = (
    "The cron daemon reads its tables at start. Each user has a table of their own. "
    "System jobs live elsewhere and are read too. "
    "To change your own table, run crontab -e, which opens it in your editor and installs it on exit. "
    "Lines starting with a hash are comments. Blank lines are ignored by the daemon. " + "Filler sentence here. " * 20
)


def test_the_passage_shown_is_the_part_of_the_chunk_that_matches() -> None:
    passage = best_passage(LONG, "how do I edit my crontab", width=160)
    assert "crontab -e" in passage and len(passage) <= 170
    assert passage.startswith("…") and passage.endswith("…")  # cut on both sides, and said so
    assert best_passage("short text", "anything") == "short text"
    semantic = best_passage(LONG, "scheduling periodic tasks", width=120)
    assert semantic.startswith("The cron daemon")  # no word of the query occurs: the start of the chunk
    chinese = "第一段讲的是面包的发酵过程。" * 10 + "编译器最早由格蕾丝·霍珀发明。" + "其他内容在这里。" * 10
    assert "编译器" in best_passage(chinese, "谁发明了编译器", width=60)
