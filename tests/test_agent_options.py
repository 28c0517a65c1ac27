"""A new agent with a new option is one file: every front-end lists it, takes its option and checks it
against the same schema (defaults and bounds written once, in the agent's own `Options`).

The agent is written into a temporary package and registered through a real entry point (a
dist-info folder on sys.path), as a third-party package would ship it; nothing else is edited.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from helpers import components_for, make_docs
from typer.testing import CliRunner

from deepsearcher.agent import catalog
from deepsearcher.cli.main import app
from deepsearcher.config import Configuration
from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.mcp_server import DeepSearcherTools, build_server
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types.errors import BadInputError, ConfigurationError

llm = scripted_llm_fixture(name="llm", fallback="NO")
runner = CliRunner()
QUESTION = "Who built the first compiler?"

SHOUT_AGENT = '''
"""Quotes the best passage, louder and more often on request: an agent with options of its own."""

from pydantic import Field

from deepsearcher.agent.base import AgentOutput, RAGAgent
from deepsearcher.agent.options import AgentOptions


class ShoutOptions(AgentOptions):
    shout: bool = Field(False, description="Upper-case the answer.")
    repeat: int = Field(1, ge=1, le=3, description="Say it this many times.")


class ShoutAgent(RAGAgent):
    __description__ = "Quotes the best passage, louder."
    Options = ShoutOptions
    label = "shout the best passage"

    async def _retrieve(self, query, ctx, collections):
        return await self.retriever.asearch(query, collections, top_k=1)

    async def _execute(self, query, ctx, collections=None):
        results = await self._retrieve(query, ctx, await self._collections(query, ctx, collections))
        text = results[0].text.strip().splitlines()[0]
        text = text.upper() if ctx.option("shout", self.shout) else text
        return AgentOutput(answer=" / ".join([text] * ctx.option("repeat", self.repeat)), results=results)
'''


@pytest.fixture
def shout_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "shout_agent").mkdir(parents=True)
    (site / "shout_agent" / "__init__.py").write_text(textwrap.dedent(SHOUT_AGENT), encoding="utf-8")
    dist = site / "shout_agent-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-agent\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[deepsearcher.providers]\nagent.shout = shout_agent:ShoutAgent\n")
    monkeypatch.syspath_prepend(str(site))
    # A fresh registry sees the new entry point; the process-wide one stays as it was for other tests.
    monkeypatch.setattr(catalog, "registry", ProviderRegistry("agent", ("deepsearcher.agent",)))


@pytest.fixture
def config_file(tmp_path: Path, llm) -> Path:
    settings = {
        "provide_settings": {
            "llm": llm.llm_config(),
            "vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}},
        },
        "server": {"data_dir": str(tmp_path / "data")},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    loaded = runner.invoke(app, ["load", str(make_docs(tmp_path / "docs")), "-c", str(path)])
    assert loaded.exit_code == 0, loaded.output
    return path


def ask_cli(config_file: Path, rest: Any, options: dict[str, Any]) -> tuple[int, str]:
    args = ["query", QUESTION, "--agent", "shout", "-c", str(config_file), "--json"]
    for name, value in options.items():
        args += ["-o", f"{name}={json.dumps(value)}"]
    result = runner.invoke(app, args)
    if result.exit_code != 0:
        return result.exit_code, " ".join(result.output.split())
    return 0, json.loads(result.stdout)["answer"]


def ask_rest(config_file: Path, rest: Any, options: dict[str, Any]) -> tuple[int, str]:
    response = rest.post("/v1/query", json={"question": QUESTION, "agent": "shout", "options": options})
    if response.status_code != 200:
        return response.status_code, response.json()["error"]
    return 0, response.json()["answer"]


def ask_mcp(config_file: Path, rest: Any, options: dict[str, Any]) -> tuple[int, str]:
    try:
        return 0, DeepSearcherTools(components_for(config_file)).deep_search(QUESTION, agent="shout", options=options)[
            "answer"
        ]
    except BadInputError as exc:
        return exc.exit_code, str(exc)


FRONT_ENDS = {"cli": ask_cli, "rest": ask_rest, "mcp": ask_mcp}


def test_a_new_agent_and_its_option_reach_every_front_end(shout_agent: None, config_file: Path, llm) -> None:
    listed = runner.invoke(app, ["agents", "--json"])
    assert listed.exit_code == 0, listed.output
    shout = next(agent for agent in json.loads(listed.stdout) if agent["name"] == "shout")
    assert shout["options"]["repeat"] == {
        "default": 1,
        "description": "Say it this many times.",
        "maximum": 3,
        "minimum": 1,
        "type": "integer",
    }
    with ServerThread(create_app(Configuration(config_file))) as running, httpx.Client(base_url=running.url) as rest:
        health = rest.get("/health").json()
        assert next(agent for agent in health["agents"] if agent["name"] == "shout")["options"] == shout["options"]
        answers = {name: ask(config_file, rest, {"shout": True, "repeat": 2}) for name, ask in FRONT_ENDS.items()}
        assert len(set(answers.values())) == 1, answers
        code, answer = answers["cli"]
        assert code == 0 and answer.isupper() and answer.count(" / ") == 1 and "HOPPER" in answer
        code, plain = ask_cli(config_file, rest, {})  # the schema's defaults: once, as written
        assert code == 0 and " / " not in plain and plain.upper() == answer.split(" / ")[0] != plain

        refusals = {name: ask(config_file, rest, {"repeat": 9}) for name, ask in FRONT_ENDS.items()}
        assert {code for code, _ in refusals.values()} == {2, 400}  # a bad option is a usage error
        for _, message in refusals.values():
            assert "repeat: Input should be less than or equal to 3 (got 9)" in message
        typo = {name: ask(config_file, rest, {"repaet": 2}) for name, ask in FRONT_ENDS.items()}
        for _, message in typo.values():
            assert "unknown option 'repaet' (did you mean 'repeat'?)" in message
    assert llm.call_count == 0

    server = build_server(DeepSearcherTools(components_for(config_file)))
    import anyio

    tools = {tool.name: tool for tool in anyio.run(server.list_tools)}
    schema = getattr(tools["deep_search"], "input_schema", None) or tools["deep_search"].inputSchema
    assert "shout" in json.dumps(schema["properties"]["agent"]) and "options" in schema["properties"]


def test_query_settings_are_checked_against_the_agents_schemas(tmp_path: Path) -> None:
    from deepsearcher.app.components import check_configuration

    def config(query_settings: dict[str, Any]) -> Configuration:
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump({"query_settings": query_settings}), encoding="utf-8")
        return Configuration(path)

    with pytest.raises(ConfigurationError, match=r"unknown option 'max_iters' \(did you mean 'max_iter'\?\)"):
        check_configuration(config({"max_iters": 2}))
    with pytest.raises(ConfigurationError, match=r"max_iter: Input should be less than or equal to 20 \(got 50\)"):
        check_configuration(config({"max_iter": 50}))
    with pytest.raises(ConfigurationError, match=r"timeout: Input should be greater than 0"):
        check_configuration(config({"timeout": -1}))
    check_configuration(config({"max_iter": 2, "top_k": 7, "early_stopping": True, "agent": "chain"}))


def test_max_iter_and_its_bounds_are_written_once() -> None:
    """The bound lives in deepsearcher/agent/options.py; nothing else in the package repeats it."""
    import deepsearcher

    root = Path(deepsearcher.__file__).parent
    bounds = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "le=20" in path.read_text(encoding="utf-8") or "max_iter: int = 3" in path.read_text(encoding="utf-8")
    ]
    assert bounds == ["agent/options.py"]
    assert "max_iter:" not in [
        line.split("#")[0].strip()[:9] for line in (root / "config" / "default_config.yaml").read_text().splitlines()
    ]


def test_a_provider_option_is_checked_before_anything_is_built(tmp_path: Path) -> None:
    from deepsearcher.app.components import check_configuration

    def config(vector_db: dict[str, Any]) -> Configuration:
        path = tmp_path / "config.yaml"
        path.write_text(
            yaml.safe_dump({"provide_settings": {"vector_db": {"provider": "Milvus", "config": vector_db}}}),
            encoding="utf-8",
        )
        return Configuration(path)

    with pytest.raises(ConfigurationError, match=r"unknown option 'hybird'.*Did you mean 'hybrid'"):
        check_configuration(config({"hybird": False}))
    with pytest.raises(ConfigurationError, match=r"unknown option 'bogus_option'"):
        check_configuration(config({"bogus_option": 1}))  # not one of pymilvus' connection options either
    check_configuration(config({"secure": False}))  # one of them: passed on
    with pytest.raises(ConfigurationError, match=r"rrf_k: Input should be a valid integer"):
        check_configuration(config({"rrf_k": "many"}))
    check_configuration(config({"hybrid": False, "uri": str(tmp_path / "m.db")}))


def test_an_llm_config_key_is_an_option_or_a_request_parameter_of_the_api(tmp_path: Path) -> None:
    """OpenAI-family providers pass what the SDK's create() takes; anything else is refused by name
    (a vendor's own parameter goes under extra_body), before the SDK is ever called."""
    from deepsearcher.app.components import check_configuration

    def config(llm: dict[str, Any]) -> Configuration:
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump({"provide_settings": {"llm": {"provider": "OpenAI", "config": llm}}}))
        return Configuration(path)

    check_configuration(config({"model": "m", "temperature": 0, "max_concurrency": 1, "extra_body": {"num_ctx": 8}}))
    with pytest.raises(ConfigurationError, match=r"unknown option 'temprature'\. Did you mean 'temperature'\?"):
        check_configuration(config({"temprature": 0.2}))
    with pytest.raises(ConfigurationError, match=r"unknown option 'bogus_option'"):
        check_configuration(config({"bogus_option": 1}))
    check_configuration(config({"bogus_option": 1}), skip=("llm",))  # a command not using the LLM: no SDK import


def test_a_query_validates_its_options_once(
    shout_agent: None, config_file: Path, llm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query service validates the options and hands the agent the result: not checked again."""
    from deepsearcher.agent import base as agent_base

    tools = DeepSearcherTools(components_for(config_file))
    checked: list[object] = []
    original = agent_base.validate_options

    def counting(*args: Any, **kwargs: Any) -> Any:
        checked.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(agent_base, "validate_options", counting)
    answer = tools.deep_search(QUESTION, agent="shout", options={"shout": True, "repeat": 2})["answer"]
    assert answer.isupper() and answer.count(" / ") == 1
    assert len(checked) == 1, checked
