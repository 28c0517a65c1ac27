"""The web page in a real headless Chromium against the real server app.

Needs Debian's Chromium at /usr/bin/chromium (`apt-get install chromium`) and the
`playwright` Python package (its own browser downloads are not used); skipped without them.
The server is `create_app(config)` under uvicorn on 127.0.0.1 with a Milvus Lite store in a
temp dir and the agents' LLM calls answered by the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
import yaml

from helpers import make_docs
from deepsearcher.testing import scripted_llm_fixture

CHROMIUM = os.environ.get("DEEPSEARCHER_TEST_CHROMIUM", "/usr/bin/chromium")
import playwright.sync_api as playwright_api  # noqa: E402 - dev extra

if not os.path.exists(CHROMIUM):  # `make test` installs it; never silently skip the browser test
    raise RuntimeError(f"No Chromium at {CHROMIUM}: install Debian's chromium package (make browser) or set DEEPSEARCHER_TEST_CHROMIUM.")

from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.server.app import create_app  # noqa: E402
from deepsearcher.server.runner import ServerThread  # noqa: E402

server = scripted_llm_fixture(name="server", fallback="NO")

SUB_QUERIES = "Break the question below"
JUDGE = "Does the passage below contain"
REFLECT = "These queries were already searched"
ANSWER = "Answer the question using only the numbered sources"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOT = Path(os.environ.get("DEEPSEARCHER_SCREENSHOT_DIR", "/tmp")) / "deepsearcher-web-page.png"


def make_config(tmp_path: Path, milvus_uri: str, llm: dict[str, Any], server_settings: dict[str, Any] | None = None) -> Configuration:
    settings = {
        "provide_settings": {"llm": llm, "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}}},
        "server": {"data_dir": str(tmp_path / "data"), **(server_settings or {})},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return Configuration(path)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" and "401" not in message.text else None)
    page.set_default_timeout(30_000)
    yield page
    context.close()
    assert errors == [], errors


def cite_hopper(request) -> str:
    match = re.search(r"\[(\d+)\] \(Grace Hopper\)", request.last_user_message)
    n = match.group(1) if match else "1"
    return (
        f"Grace Hopper built the first compiler, the A-0 system, in 1952 [{n}].\n\n"
        f"- **A-0** translated symbolic code <script>window.pwned = 1</script> [{n}]\n"
        "- It preceded FLOW-MATIC"
    )


def test_upload_ask_and_read_the_cited_source(server, tmp_path: Path, milvus_uri: str, page) -> None:
    server.on(SUB_QUERIES, '["Who built the first compiler?"]')
    server.on(JUDGE, lambda r: "YES" if "Hopper" in r.last_user_message.split("Passage:")[-1] else "NO")
    server.on(REFLECT, "[]")
    server.on(ANSWER, cite_hopper)
    docs = make_docs(tmp_path / "docs")
    config = make_config(tmp_path, milvus_uri, server.llm_config(retry_base_delay=0.01))

    with ServerThread(create_app(config)) as live:
        page.goto(live.url + "/")
        page.wait_for_selector("#server-status.ok")
        assert page.title() == "DeepSearcher"
        assert page.input_value("#target-collection") == "__new__"  # no collections yet

        # Create a collection by uploading files into it, and watch the job finish.
        page.fill("#new-collection-name", "science")
        page.fill("#new-collection-desc", "Notes on science and computing history")
        page.set_input_files("#file-input", sorted(str(p) for p in docs.iterdir()))
        assert page.locator("#file-names li").count() == 3
        page.click("#upload-button")
        page.wait_for_selector(".job[data-status=succeeded]", timeout=60_000)
        assert "3 loaded" in page.inner_text(".job .job-detail")
        page.wait_for_selector("#collection-list .collection[data-name=science].selected")
        assert "3 sources" in page.inner_text("#collection-list .collection[data-name=science]")
        assert page.input_value("#target-collection") == "science"

        # Ask with the deep agent, restricted to the new collection.
        page.select_option("#agent", "deep")
        page.fill("#max-iter", "1")
        page.select_option("#scope-select", "science")
        page.fill("#question", "Who built the first compiler?")
        page.click("#ask-button")
        page.wait_for_selector("#answer button.cite", timeout=60_000)

        kinds = page.eval_on_selector_all("#steps .step", "nodes => nodes.map(n => n.dataset.kind)")
        assert kinds[:2] == ["collections", "sub_queries"] and "search" in kinds and "judge" in kinds and kinds[-1] == "answer"
        steps = page.inner_text("#steps")
        assert "Who built the first compiler?" in steps and "science" in steps
        assert page.inner_text("#run-status") == "done"

        answer = page.locator("#answer")
        assert "Grace Hopper built the first compiler, the A-0 system, in 1952" in answer.inner_text()
        assert answer.locator("strong").inner_text() == "A-0"
        assert answer.locator("li").count() == 2
        assert answer.locator("script").count() == 0 and "<script>" in answer.inner_text()  # shown as text
        assert page.evaluate("window.pwned") is None
        usage = page.inner_text("#usage")
        assert "tokens" in usage and "LLM calls" in usage and re.search(r"\d+\.\d s", usage)
        assert page.locator("#answer-agent").inner_text() == "DeepSearch"
        assert page.locator("#sources .source.cited").count() == 1

        # The citation opens the cited chunk with its source.
        page.locator("#answer button.cite").first.click()
        panel = page.locator("#source-panel")
        panel.wait_for(state="visible")
        assert page.inner_text("#source-panel-name") == "Grace Hopper"
        assert page.inner_text("#source-panel-reference") == "upload://science/records.jsonl"
        assert "Grace Hopper built the first compiler, the A-0 system, in 1952." in page.inner_text("#source-panel-text")
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        page.keyboard.press("Escape")
        panel.wait_for(state="hidden")

    assert json.loads(server.requests[-1].raw_body)["stream"] is True  # the answer was streamed


def test_api_key_is_asked_for_and_sent(server, tmp_path: Path, milvus_uri: str, page) -> None:
    key = "page-test-key-0123456789"
    config = make_config(tmp_path, milvus_uri, server.llm_config(), {"api_keys": [{"key": key}]})
    with ServerThread(create_app(config)) as live:
        page.goto(live.url + "/")
        page.wait_for_selector("#banner:not([hidden])")
        assert "needs an API key" in page.inner_text("#banner")
        assert page.is_visible("#key-panel")
        page.fill("#api-key", "wrong-key-000000")
        page.click("#key-form button[type=submit]")
        page.wait_for_selector("#banner:not([hidden])")
        assert "Invalid API key" in page.inner_text("#banner")
        page.fill("#api-key", key)
        page.click("#key-form button[type=submit]")
        page.wait_for_selector("#collections-empty:not([hidden])")
        assert page.is_hidden("#banner")
        assert page.evaluate("localStorage.getItem('deepsearcher.apiKey')") == key
        assert page.inner_text("#key-toggle") == "API key ✓"
