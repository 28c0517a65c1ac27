"""init_config builds components once, and may be called again to switch configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_config

from deepsearcher import configuration
from deepsearcher.config import Configuration


def test_init_config_switches_and_reuses_unchanged_components(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    first = Configuration(write_config(tmp_path / "a.yaml", str(tmp_path / "a" / "milvus.db")))
    configuration.init_config(first)
    embedding, store_a = configuration.embedding_model, configuration.vector_db
    assert store_a.uri.endswith("a/milvus.db")
    assert configuration.llm is None and "OPENAI_API_KEY" in str(configuration.llm_error)
    assert configuration.default_searcher is None  # no LLM: no agents, retrieval still works

    second = Configuration(write_config(tmp_path / "b.yaml", str(tmp_path / "b" / "milvus.db")))
    second.set_provider_config(
        "llm", "OpenAI", {"model": "gpt-4o-mini", "api_key": "sk-test", "base_url": "http://127.0.0.1:9/v1"}
    )
    configuration.init_config(second)
    assert configuration.vector_db is not store_a and configuration.vector_db.uri.endswith("b/milvus.db")
    assert configuration.embedding_model is embedding  # same settings: the model is not loaded again
    assert configuration.llm is not None and configuration.llm_error is None
    assert [type(agent).__name__ for agent in configuration.default_searcher.rag_agents] == ["DeepSearch", "ChainOfRAG"]
    assert type(configuration.naive_rag).__name__ == "NaiveRAG"
    configuration.vector_db.close()
