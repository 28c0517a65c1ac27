"""`deepsearcher providers`: every registered provider per feature, its extra and env var."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.cli.providers_cmd import FEATURES, collect

runner = CliRunner()


def listing(*args: str) -> list[dict]:
    result = runner.invoke(app, ["providers", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def row(rows: list[dict], feature: str, name: str) -> dict:
    [match] = [r for r in rows if r["feature"] == feature and r["name"] == name]
    return match


def test_every_feature_and_the_new_providers_are_listed(monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    rows = listing()
    assert {r["feature"] for r in rows} == set(FEATURES)
    names = {(r["feature"], r["name"]) for r in rows}
    assert {
        ("vector_db", "Milvus"),
        ("vector_db", "Qdrant"),
        ("embedding", "OpenAIEmbedding"),
        ("embedding", "VoyageEmbedding"),
        ("file_loader", "FileLoader"),
        ("file_loader", "UnstructuredLoader"),
        ("file_loader", "DoclingLoader"),
    } <= names
    qdrant = row(rows, "vector_db", "Qdrant")
    assert (qdrant["extra"], qdrant["requires"], qdrant["installed"]) == (
        "qdrant",
        ["qdrant_client"],
        True,
    )  # in the dev extra
    voyage = row(rows, "embedding", "VoyageEmbedding")
    assert (voyage["env_var"], voyage["env_set"], voyage["installed"]) == ("VOYAGE_API_KEY", False, True)


def test_env_var_set_or_not(monkeypatch):
    monkeypatch.setenv("JINA_API_KEY", "jina_x")
    monkeypatch.setenv("SILICONFLOW_API_KEY", "   ")  # blank counts as not set
    rows = listing()
    assert row(rows, "embedding", "JinaEmbedding")["env_set"] is True
    assert row(rows, "embedding", "SiliconflowEmbedding")["env_set"] is False
    assert (
        row(rows, "embedding", "OllamaEmbedding")["env_var"] is None
        and row(rows, "embedding", "OllamaEmbedding")["env_set"] is None
    )


def test_a_missing_extra_is_reported_with_its_install_command(monkeypatch):
    for module in list(sys.modules):
        if module == "litellm" or module.startswith("litellm."):
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "litellm", None)  # as if not installed
    rows = collect()
    litellm = row(rows, "embedding", "LiteLLMEmbedding")
    assert litellm["installed"] is False and litellm["missing"] == ["litellm"]
    assert litellm["install"] == "pip install 'deepsearcher[litellm]'"
    assert row(rows, "embedding", "OpenAIEmbedding")["install"] is None


def test_the_configured_provider_is_marked(tmp_path: Path):
    config = tmp_path / "config.yaml"
    config.write_text(
        'provide_settings:\n  embedding:\n    provider: "VoyageEmbedding"\n    config: {}\n', encoding="utf-8"
    )
    rows = listing("--config", str(config))
    configured = {r["feature"]: r["name"] for r in rows if r["configured"]}
    assert configured["embedding"] == "VoyageEmbedding"
    assert configured["vector_db"] == "Milvus"  # the default, untouched by this config


def test_table_output(monkeypatch):
    monkeypatch.setenv("VOYAGE_API_KEY", "pa-x")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NOVITA_API_KEY", raising=False)
    result = runner.invoke(app, ["providers"])
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.stdout.splitlines()]
    for feature in FEATURES:
        assert feature in lines
    voyage = next(line for line in lines if "VoyageEmbedding" in line)
    assert "VOYAGE_API_KEY" in voyage and "not set" not in voyage and "set" in voyage
    novita = next(line for line in lines if "NovitaEmbedding" in line)
    assert "NOVITA_API_KEY" in novita and "not set" in novita


def test_a_broken_config_is_one_line(tmp_path: Path):
    config = tmp_path / "bad.yaml"
    config.write_text("provide_settings:\n  embedding: 3\n", encoding="utf-8")
    result = runner.invoke(app, ["providers", "--config", str(config)])
    assert result.exit_code == 1
    assert "Error:" in result.output and "provide_settings.embedding" in result.output
