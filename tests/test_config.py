"""Configuration: defaults, partial user files, ${ENV} expansion, validation messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.config import Configuration
from deepsearcher.types import ConfigurationError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_need_no_file() -> None:
    config = Configuration()
    assert config.get_provider_config("embedding")["provider"] == "MiniLMEmbedding"
    assert config.get_provider_config("vector_db")["config"]["hybrid"] is True
    assert "max_iter" not in config.query_settings  # each agent's default is in its options schema
    assert "chunk_size" not in config.load_settings  # follows the embedding model's window


def test_user_file_overrides_only_what_it_sets(tmp_path: Path) -> None:
    config = Configuration(
        write(
            tmp_path,
            "query_settings:\n  max_iter: 5\nprovide_settings:\n  vector_db:\n    config:\n      hybrid: false\n",
        )
    )
    assert config.query_settings["max_iter"] == 5
    vector_db = config.get_provider_config("vector_db")
    assert vector_db["provider"] == "Milvus"
    assert vector_db["config"]["hybrid"] is False
    assert vector_db["config"]["default_collection"] == "deepsearcher"  # kept from defaults
    assert config.load_settings["chunk_overlap"] == 100


def test_changing_provider_drops_the_default_providers_config(tmp_path: Path) -> None:
    config = Configuration(
        write(
            tmp_path, 'provide_settings:\n  llm:\n    provider: "DeepSeek"\n    config:\n      model: "deepseek-chat"\n'
        )
    )
    assert config.get_provider_config("llm") == {"provider": "DeepSeek", "config": {"model": "deepseek-chat"}}


def test_env_expansion_with_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DS_TEST_KEY", "sk-123")
    monkeypatch.delenv("DS_TEST_MISSING", raising=False)
    config = Configuration(
        write(
            tmp_path,
            'provide_settings:\n  llm:\n    config:\n      api_key: "${DS_TEST_KEY}"\n      base_url: "${DS_TEST_MISSING:-http://localhost:11434/v1}"\n',
        )
    )
    llm = config.get_provider_config("llm")["config"]
    assert llm["api_key"] == "sk-123"
    assert llm["base_url"] == "http://localhost:11434/v1"


def test_original_deepsearcher_config_file_is_accepted(tmp_path: Path) -> None:
    original = """
provide_settings:
  llm:
    provider: "OpenAI"
    config:
      model: "o1-mini"
  embedding:
    provider: "OpenAIEmbedding"
    config:
      model: "text-embedding-ada-002"
  file_loader:
    provider: "PDFLoader"
    config: {}
  web_crawler:
    provider: "FireCrawlCrawler"
    config: {}
  vector_db:
    provider: "Milvus"
    config:
      default_collection: "deepsearcher"
      uri: "./milvus.db"
      token: "root:Milvus"
      db: "default"
query_settings:
  max_iter: 3
load_settings:
  chunk_size: 1500
  chunk_overlap: 100
"""
    config = Configuration(write(tmp_path, original))
    assert config.get_provider_config("file_loader")["provider"] == "PDFLoader"
    assert config.get_provider_config("vector_db")["config"]["uri"] == "./milvus.db"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("provide_setings: {}\n", "Unknown top-level key 'provide_setings'"),
        ("provide_settings:\n  llms: {}\n", "Unknown feature 'llms'. Allowed values: llm, embedding"),
        ("provide_settings:\n  llm:\n    providr: OpenAI\n", "Unknown key 'provide_settings.llm.providr'"),
        ("load_settings:\n  chunk_size: -5\n", "'load_settings.chunk_size'"),
        # query_settings keys and values: checked against the agents' schemas (test_agent_options.py)
        ("query_settings:\n  agent: 3\n", "must be an agent name, got 3"),
        ("eval:\n  x: 1\n", "Unknown top-level key 'eval'"),
        ("- just\n- a list\n", "must be a mapping"),
        ("provide_settings: [\n", "not valid YAML"),
    ],
)
def test_validation_names_the_bad_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigurationError, match=expected.replace("(", r"\(").replace(".", r"\.")):
        Configuration(write(tmp_path, text))


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="Cannot read config file .*nope.yaml"):
        Configuration(tmp_path / "nope.yaml")


def test_set_and_get_provider_config() -> None:
    config = Configuration()
    config.set_provider_config("llm", "Ollama", {"model": "qwen3:8b"})
    assert config.get_provider_config("llm") == {"provider": "Ollama", "config": {"model": "qwen3:8b"}}
    with pytest.raises(ConfigurationError, match="Unknown feature 'search'"):
        config.set_provider_config("search", "X", {})


def test_an_unset_variable_is_an_error_naming_it_and_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DS_UNSET_DIR", raising=False)
    text = 'provide_settings:\n  vector_db:\n    config:\n      uri: "${DS_UNSET_DIR}/milvus.db"\n'
    with pytest.raises(
        ConfigurationError, match=r"DS_UNSET_DIR in 'provide_settings\.vector_db\.config\.uri' is not set"
    ):
        Configuration(write(tmp_path, text))
    alone = "provide_settings:\n  llm:\n    config:\n      model: ${DS_UNSET_DIR}\n"
    with pytest.raises(ConfigurationError, match=r"DS_UNSET_DIR.*:-default"):
        Configuration(write(tmp_path, alone))
    monkeypatch.setenv("DS_EMPTY", "")
    fallback = (
        'provide_settings:\n  llm:\n    config:\n      model: "${DS_EMPTY:-qwen}"\n      base_url: "x${DS_EMPTY}"\n'
    )
    config = Configuration(write(tmp_path, fallback))
    assert config.get_provider_config("llm")["config"]["model"] == "qwen"  # empty takes the default, as in sh
    assert config.get_provider_config("llm")["config"]["base_url"] == "x"  # set but empty, no default: empty


def test_a_binary_config_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ConfigurationError, match="is not a text file"):
        Configuration(path)
    path.write_bytes(b"provide_settings: {}\n\x00\x01")
    with pytest.raises(ConfigurationError, match="NUL bytes"):
        Configuration(path)
