"""DeepSearcher's configuration, as its users have it: every set_provider_config(...) line of
its README resolves to one of our providers, and its config.yaml loads unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from deepsearcher import configuration
from deepsearcher.config import Configuration
from deepsearcher.configuration import ModuleFactory, _registries
from deepsearcher.types import DeepSearcherError

LINES = json.loads((Path(__file__).parent / "compat_data" / "readme_provider_configs.json").read_text())["lines"]
KEY_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "DASHSCOPE_API_KEY",
    "DEEPSEEK_API_KEY",
    "SILICONFLOW_API_KEY",
    "TOGETHER_API_KEY",
    "XAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "PPIO_API_KEY",
    "JIEKOU_API_KEY",
    "VOLCENGINE_API_KEY",
    "ARK_API_KEY",
    "GLM_API_KEY",
    "ZHIPUAI_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_PROFILE",
    "WATSONX_APIKEY",
    "WATSONX_URL",
    "WATSONX_PROJECT_ID",
    "NOVITA_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "VOYAGE_API_KEY",
    "JINA_API_KEY",
    "JINAAI_API_KEY",
    "FIRECRAWL_API_KEY",
    "AZURE_SEARCH_API_KEY",
    "UNSTRUCTURED_API_KEY",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # "./milvus.db" lands here
    return tmp_path


@pytest.mark.parametrize(
    ("feature", "provider", "settings"), LINES, ids=[f"{f}-{p}-{i}" for i, (f, p, _) in enumerate(LINES)]
)
def test_readme_line_resolves_to_a_registered_provider(
    clean_env: Path, feature: str, provider: str, settings: dict
) -> None:
    config = Configuration()
    config.set_provider_config(feature, provider, settings)
    cls = _registries()[feature].get(provider)  # never "Unknown provider"
    assert isinstance(cls, type)
    try:
        component = ModuleFactory(config).create(feature)
    except (DeepSearcherError, OSError) as exc:  # a missing key, extra, service or model: said clearly
        message = str(exc)
        assert "Unknown" not in message and "does not fit provider" not in message, message
        assert len(message) > 20
        return
    assert isinstance(component, cls)
    close = getattr(component, "close", None)
    if close is not None:
        close()


def test_upstream_config_yaml_loads_unchanged(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = {
        "provide_settings": {
            "llm": {"provider": "OpenAI", "config": {"model": "gpt-4o-mini"}},
            "embedding": {"provider": "OpenAIEmbedding", "config": {"model": "text-embedding-ada-002"}},
            "file_loader": {"provider": "PDFLoader", "config": {}},
            "web_crawler": {"provider": "FireCrawlCrawler", "config": {}},
            "vector_db": {
                "provider": "Milvus",
                "config": {
                    "default_collection": "deepsearcher",
                    "uri": "./milvus.db",
                    "token": "root:Milvus",
                    "db": "default",
                },
            },
        },
        "query_settings": {"max_iter": 3},
        "load_settings": {"chunk_size": 1500, "chunk_overlap": 100},
    }
    path = clean_env / "config.yaml"
    path.write_text(yaml.safe_dump(upstream), encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    configuration.init_config(config=Configuration(config_path=str(path)))
    try:
        assert configuration.vector_db.uri == str(clean_env / "milvus.db")  # relative to where it runs
        assert configuration.embedding_model.dimension == 1536
        assert type(configuration.web_crawler).__name__ == "FireCrawlCrawler" or configuration.web_crawler_error
        assert "FIRECRAWL_API_KEY" in str(configuration.web_crawler_error)
        assert [type(a).__name__ for a in configuration.default_searcher.rag_agents] == ["DeepSearch", "ChainOfRAG"]
        assert configuration.config.load_settings["chunk_size"] == 1500
    finally:
        configuration.vector_db.close()
