"""Hostile nesting and oversize lists are refused in one clear line wherever input is parsed: REST
bodies (a real uvicorn server on loopback), config YAML, JSON / JSONL files and evaluation
datasets. The MCP wire's case is in test_mcp_wire.py (a real `deepsearcher mcp` subprocess)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from test_server_limits import serve

from deepsearcher.config import Configuration
from deepsearcher.evaluation.dataset import DatasetError, read_questions
from deepsearcher.loader.file_loader.json_loader import JsonFileLoader
from deepsearcher.loader.file_loader.jsonl_loader import JsonlLoader
from deepsearcher.types import ConfigurationError, LoaderError
from deepsearcher.utils.bounded_json import MAX_DEPTH, InputLimitError, check_depth, nesting_depth

BRACKETS = "[" * 3000 + "]" * 3000


def test_depth_scan_counts_structure_only() -> None:
    assert nesting_depth('{"a": [1, {"b": "[[[[[[[[ in a string ]]]]"}]}') == 3
    assert nesting_depth(r'["escaped \" quote [[[[", []]') == 2
    check_depth("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x")  # at the limit: accepted
    with pytest.raises(InputLimitError, match="65 levels deep; at most 64"):
        check_depth("[" * 65 + "]" * 65, "x")


def test_rest_refuses_deep_bodies_and_bounds_what_a_422_echoes(tmp_path: Path) -> None:
    with serve(tmp_path, max_request_bytes=8 * 1024 * 1024) as running, httpx.Client(base_url=running.url) as client:
        for route in ("/v1/search", "/v1/load", "/load-files/"):
            deep = client.post(route, content=BRACKETS, headers={"content-type": "application/json"})
            assert deep.status_code == 400, (route, deep.text)
            assert (
                deep.json()["error"]
                == "The request body nests arrays/objects 3000 levels deep; at most 64 are accepted."
            )
        many = client.post("/v1/load", json={"inputs": ["/x" * 2100] * 900})  # 3.8 MB of paths too long
        assert many.status_code == 422 and len(many.content) < 1000
        assert many.json()["error"].endswith("; and 895 more problem(s)")
        assert client.get("/health").status_code == 200  # the server is still there


def test_files_and_config_refuse_deep_nesting_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "deep.yaml"
    config.write_text(f"a: {BRACKETS}\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="nests its values too deeply"):
        Configuration(config)
    config.write_text("# " + "x" * 2_000_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="is 2,000,003 bytes; a config is at most 1,048,576"):
        Configuration(config)
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"text": "fine"}\n{"text": ' + BRACKETS + "}\n", encoding="utf-8")
    with pytest.raises(LoaderError, match="line 2 nests arrays/objects 3001 levels deep"):
        JsonlLoader().load_file(lines)
    whole = tmp_path / "deep.json"
    whole.write_text('{"text": ' + BRACKETS + "}", encoding="utf-8")
    with pytest.raises(LoaderError, match="JSON nested too deeply"):
        JsonFileLoader().load_file(whole)
    dataset = tmp_path / "deep_eval.jsonl"
    dataset.write_text('{"question": "q", "answer": ' + BRACKETS + "}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: the record nests arrays/objects 3001 levels deep"):
        read_questions(dataset)
