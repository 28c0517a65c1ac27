"""Agents are providers: a new agent is one file, and every front-end lists and accepts it.

The plugin agent lives in tests/fake_provider_pkg/agents.py and is registered through a
real entry point (a dist-info folder on sys.path), as a third-party package would do it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import components_for, make_docs
from typer.testing import CliRunner

from deepsearcher import configuration
from deepsearcher.agent import catalog
from deepsearcher.cli.main import app
from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types.errors import BadInputError, ConfigurationError

llm = scripted_llm_fixture(name="llm", fallback="NO")
runner = CliRunner()


def test_the_built_in_agents_come_from_the_registry_router_first() -> None:
    assert catalog.agent_names() == ["auto", "deep", "chain", "naive"]
    infos = {info.name: info for info in catalog.agent_infos()}
    assert infos["auto"].routes_agents and not infos["naive"].iterative and infos["deep"].iterative
    with pytest.raises(BadInputError, match="Did you mean 'deep'"):
        catalog.check_agent("deeep")


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "site" / "echo_agent-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-agent\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[deepsearcher.providers]\nagent.echo = fake_provider_pkg.agents:EchoAgent\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    # A fresh registry sees the new entry point; the process-wide one stays as it was for other tests.
    monkeypatch.setattr(catalog, "registry", ProviderRegistry("agent", ("deepsearcher.agent",)))


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str, llm) -> Path:
    settings = {
        "provide_settings": {
            "llm": llm.llm_config(),
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
        },
        "query_settings": {"agent": "echo"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def test_a_plugin_agent_reaches_every_front_end(plugin: None, config_file: Path, tmp_path: Path, llm) -> None:
    from deepsearcher.app.querying import QueryRequest  # the one model: REST validates bodies against it too
    from deepsearcher.evaluation.runner import build_specs, eval_agents
    from deepsearcher.mcp_server import DeepSearcherTools, build_server

    assert catalog.agent_names() == ["auto", "deep", "chain", "echo", "naive"]
    assert "echo" in eval_agents() and [spec.label for spec in build_specs(["echo", "deep"], [1, 2])] == [
        "echo",
        "deep@1",
        "deep@2",
    ]
    assert "echo" in QueryRequest.model_json_schema()["properties"]["agent"]["enum"]
    assert QueryRequest(question="q", agent="echo").agent == "echo"

    docs = make_docs(tmp_path / "docs")
    loaded = runner.invoke(app, ["load", str(docs), "--collection", "science", "-c", str(config_file)])
    assert loaded.exit_code == 0, loaded.output
    components = components_for(config_file)
    try:
        # query_settings.agent: echo is the default, with no --agent given
        result = runner.invoke(
            app, ["query", "Who built the first compiler?", "--collection", "science", "-c", str(config_file), "--json"]
        )
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["agent"] == "EchoAgent" and "Hopper" in data["answer"] and llm.call_count == 0
        assert components.agents["echo"].top_k == 10  # built from its options schema like the built-in agents

        server = build_server(DeepSearcherTools(components))
        tools = {tool.name: tool for tool in _list_tools(server)}
        deep_search = tools["deep_search"]
        schema = getattr(deep_search, "input_schema", None) or deep_search.inputSchema  # mcp 2.x / 1.x
        assert "echo" in json.dumps(schema["properties"]["agent"])
    finally:
        components.close()


def _list_tools(server) -> list:
    import anyio

    return anyio.run(server.list_tools)


def test_an_unknown_configured_agent_is_a_configuration_error(tmp_path: Path, milvus_uri: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"query_settings": {"agent": "chian"}}), encoding="utf-8")
    from deepsearcher.config import Configuration

    with pytest.raises(ConfigurationError, match="query_settings.agent 'chian'.*Did you mean 'chain'"):
        configuration.init_config(Configuration(path))
