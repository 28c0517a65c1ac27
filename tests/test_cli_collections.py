"""`deepsearcher collections drop`: the collection by NAME or by the one flag every command uses
(`--collection`, alias `--collection-name`, DeepSearcher's `--collection_name`), on a real store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_config
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.embedding.minilm_embedding import DIMENSION
from deepsearcher.vector_db.milvus import Milvus

runner = CliRunner()


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    return write_config(tmp_path / "config.yaml", milvus_uri)


def collections(config_file: Path) -> list[str]:
    listed = runner.invoke(app, ["collections", "list", "-c", str(config_file), "--json"])
    assert listed.exit_code == 0, listed.output
    return sorted(entry["name"] for entry in json.loads(listed.stdout))


def create(milvus_uri: str, *names: str) -> None:
    """Empty collections in the test's store, written by a store object of its own and closed
    again (the subprocess below needs the Lite file free)."""
    with Milvus(uri=milvus_uri) as store:
        for name in names:
            store.init_collection(dim=DIMENSION, collection=name)


@pytest.mark.parametrize("spelling", [["by_name"], ["--collection", "by_name"], ["--collection-name", "by_name"]])
def test_drop_takes_the_name_or_the_collection_flag(spelling: list[str], config_file: Path, milvus_uri: str) -> None:
    create(milvus_uri, "by_name", "kept")
    dropped = runner.invoke(app, ["collections", "drop", *spelling, "--yes", "-c", str(config_file)])
    assert dropped.exit_code == 0, dropped.output
    assert "Dropped 'by_name'" in dropped.output
    assert collections(config_file) == ["kept"]


def test_drop_refuses_two_names_none_or_an_unknown_one(config_file: Path, milvus_uri: str) -> None:
    create(milvus_uri, "alpha", "beta")
    both = runner.invoke(app, ["collections", "drop", "alpha", "--collection", "beta", "--yes", "-c", str(config_file)])
    assert both.exit_code == 2 and "two collections given" in " ".join(both.output.split())
    neither = runner.invoke(app, ["collections", "drop", "--yes", "-c", str(config_file)])
    assert neither.exit_code == 2 and "name the collection to drop" in " ".join(neither.output.split())
    unknown = runner.invoke(app, ["collections", "drop", "--collection", "gamma", "--yes", "-c", str(config_file)])
    message = " ".join(unknown.output.split())
    assert unknown.exit_code == 1 and "Collection 'gamma' does not exist" in message and "alpha, beta" in message
    same = runner.invoke(
        app, ["collections", "drop", "alpha", "--collection", "alpha", "--yes", "-c", str(config_file)]
    )
    assert same.exit_code == 0, same.output  # the same name twice is one collection
    assert collections(config_file) == ["beta"]


def test_upstream_underscore_spelling_through_the_real_entry_point(config_file: Path, milvus_uri: str) -> None:
    """DeepSearcher users type `--collection_name`; the console entry point rewrites it."""
    create(milvus_uri, "legacy", "kept")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "deepsearcher.cli.main",
        "collections",
        "drop",
        "--collection_name",
        "legacy",
        "--yes",
        "-c",
        str(config_file),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert collections(config_file) == ["kept"]
