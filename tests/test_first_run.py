"""A new user's first run: the version, `--config` on every command, error advice naming the real
cause, `make demo` saying how to get an answer, steps in the user's words, and the server's `/docs`
rendering in Chromium with the network off (nothing fetched from a CDN).

Chromium is Debian's (as in tests/test_web_page.py); the server is the real app under uvicorn on
127.0.0.1 with a Milvus Lite store in a temp dir.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import typer
import yaml
from test_web_page import CHROMIUM, CHROMIUM_ARGS, SCREENSHOT, playwright_api
from typer.testing import CliRunner

import deepsearcher
from deepsearcher.agent.events import StepEvent, describe
from deepsearcher.cli.main import app
from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def leaf_commands(group, path=()):  # noqa: ANN001, ANN201 - click objects of Typer's vendored click
    for name, command in group.commands.items():
        if getattr(command, "commands", None):
            yield from leaf_commands(command, (*path, name))
        else:
            yield (*path, name), command


def test_version_is_printed_before_anything_else_is_read() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"deepsearcher {deepsearcher.__version__}"


def test_every_command_takes_config() -> None:
    commands = dict(leaf_commands(typer.main.get_command(app)))
    assert {("agents",), ("query",), ("collections", "list"), ("serve",), ("mcp",)} <= set(commands)
    lacking = [
        " ".join(path) for path, command in commands.items() if not any("--config" in p.opts for p in command.params)
    ]
    assert lacking == []


def test_agents_reads_the_config_and_marks_its_default_agent(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"query_settings": {"agent": "naive"}}), encoding="utf-8")
    listed = runner.invoke(app, ["agents", "--config", str(config), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [agent["name"] for agent in json.loads(listed.stdout) if agent["default"]] == ["naive"]
    config.write_text(yaml.safe_dump({"query_settings": {"agent": "dep"}}), encoding="utf-8")
    wrong = runner.invoke(app, ["agents", "-c", str(config)])
    assert wrong.exit_code == 1 and "query_settings.agent 'dep'" in wrong.output and "'deep'" in wrong.output


def test_a_wrong_model_name_is_named_without_api_key_advice(tmp_path: Path, milvus_uri: str) -> None:
    config = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {
            "llm": {"provider": "LlamaCpp", "config": {"model": "qwen2.5-coder-0.5b-instuct"}},
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
        }
    }
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    result = runner.invoke(app, ["query", "What is in there?", "--config", str(config)])
    assert result.exit_code != 0
    assert "'qwen2.5-coder-0.5b-instuct' is neither a GGUF file nor a known model name" in result.output
    assert "API_KEY" not in result.output and "No LLM is configured" not in result.output


def test_demo_without_an_llm_says_in_one_line_how_to_get_an_answer(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.update(DEEPSEARCHER_MODEL_DIR=str(tmp_path / "no-models"), HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        cwd=tmp_path,  # the demo's store (./.demo/milvus.db) goes here
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    advice = [line for line in lines if "make demo-local" in line]
    assert len(advice) == 1 and "OPENAI_API_KEY" in advice[0]
    assert "Loaded 3 sources" in done.stdout and "field_trials.json" in done.stdout
    assert lines[-1].startswith("Next: .venv/bin/deepsearcher ")
    assert (tmp_path / ".demo").is_dir()


def test_steps_read_in_the_users_words() -> None:
    trimmed = describe(StepEvent("context_trimmed", {"step": "answer", "kept": 6, "cut": 1, "dropped": 4})).line()
    assert trimmed.startswith("fitted to the model: the answer is written from the best 6 of 10 passages")
    assert "=" not in trimmed and "context_trimmed" not in trimmed
    fallback = describe(StepEvent("fallback", {"step": "judge", "kept": 3, "retrieved": 5})).line()
    assert "3 of 5 passages" in fallback and "judge step" not in fallback


def test_api_docs_render_offline_in_chromium(tmp_path: Path, milvus_uri: str) -> None:
    config = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}}},
        "server": {"data_dir": str(tmp_path / "data")},
    }
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    outside: list[str] = []

    def only_this_server(route) -> None:  # noqa: ANN001 - playwright's Route
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:  # the network is off: a CDN request fails, and is recorded
            outside.append(route.request.url)
            route.abort("internetdisconnected")

    with ServerThread(create_app(Configuration(config))) as live, playwright_api.sync_playwright() as playwright:
        assert httpx.get(live.url + "/redoc").status_code == 200
        assert "Redoc" in httpx.get(live.url + "/docs-assets/redoc.standalone.js").text[:2000]
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route("**/*", only_this_server)
            page = context.new_page()
            page.goto(live.url + "/docs")
            page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
            operations = page.locator(".swagger-ui .opblock").count()
            title = page.inner_text(".swagger-ui .info .title")
            page.screenshot(path=str(SCREENSHOT.with_name("deepsearcher-api-docs.png")), full_page=False)
        finally:
            browser.close()
    assert outside == []
    assert "DeepSearcher" in title and operations >= 15  # every route of the API, rendered
