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
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from helpers import last_request, make_docs

from deepsearcher.testing import scripted_llm_fixture

CHROMIUM = os.environ.get("DEEPSEARCHER_TEST_CHROMIUM", "/usr/bin/chromium")
import playwright.sync_api as playwright_api  # noqa: E402 - dev extra

if not os.path.exists(CHROMIUM):  # `make test` installs it; never silently skip the browser test
    raise RuntimeError(
        f"No Chromium at {CHROMIUM}: install Debian's chromium package (make browser) or set DEEPSEARCHER_TEST_CHROMIUM."  # noqa: E501 - a literal read better whole
    )

from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.server.app import create_app  # noqa: E402
from deepsearcher.server.runner import ServerThread  # noqa: E402

server = scripted_llm_fixture(name="server", fallback="NO")

SUB_QUERIES = "Break the question below"
JUDGE = "Does the passage below contain"
REFLECT = "These queries were already searched"
ANSWER = "Answer the question using only the numbered sources"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = Path(os.environ.get("DEEPSEARCHER_SCREENSHOT_DIR", "/tmp")) / "deepsearcher-web-page.png"


def make_config(
    tmp_path: Path, milvus_uri: str, llm: dict[str, Any], server_settings: dict[str, Any] | None = None
) -> Configuration:
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
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" and "401" not in message.text else None,
    )
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
        "- It preceded FLOW-MATIC, as __enter__() precedes __exit__() and f(*args, **kwargs) calls g(**opts)"
    )


def upload_science(page, docs: Path) -> None:
    """Create `science` by uploading the three docs from the page, and watch the job finish."""
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

        upload_science(page, docs)

        # Ask with the deep agent, restricted to the new collection.
        page.select_option("#agent", "deep")
        page.fill("#max-iter", "1")
        page.select_option("#scope-select", "science")
        page.fill("#question", "Who built the first compiler?")
        page.click("#ask-button")
        page.wait_for_selector("#answer button.cite", timeout=60_000)

        kinds = page.eval_on_selector_all("#steps .step", "nodes => nodes.map(n => n.dataset.kind)")
        assert (
            kinds[:2] == ["collections", "sub_queries"]
            and "search" in kinds
            and "judge" in kinds
            and kinds[-1] == "answer"
        )
        steps = page.inner_text("#steps")
        assert "Who built the first compiler?" in steps and "science" in steps
        assert page.inner_text("#run-status") == "done"

        answer = page.locator("#answer")
        assert "Grace Hopper built the first compiler, the A-0 system, in 1952" in answer.inner_text()
        assert answer.locator("strong").inner_text() == "A-0"
        # code identifiers verbatim: a dunder is not bold, `*args, **kwargs` not italic or bold
        assert "__enter__() precedes __exit__() and f(*args, **kwargs) calls g(**opts)" in answer.inner_text()
        assert answer.locator("em").count() == 0
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
        assert "Grace Hopper built the first compiler, the A-0 system, in 1952." in page.inner_text(
            "#source-panel-text"
        )
        # the quote the answer cites it for is highlighted (issue 30)
        assert page.inner_text("#source-panel-text mark.quote") == (
            "Grace Hopper built the first compiler, the A-0 system, in 1952."
        )
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        page.keyboard.press("Escape")
        panel.wait_for(state="hidden")

    assert json.loads(last_request(server, ANSWER).raw_body)["stream"] is True  # the answer was streamed


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


def test_history_sources_and_drop(server, tmp_path: Path, milvus_uri: str, page) -> None:
    """The session's questions come back after a reload (shown again, or asked again); a source is
    deleted and the collection dropped (after a confirm step) from the page, and the store agrees."""
    server.on(ANSWER, cite_hopper)
    server.on(JUDGE, "YES")
    docs = make_docs(tmp_path / "docs")
    config = make_config(tmp_path, milvus_uri, server.llm_config(retry_base_delay=0.01))
    with ServerThread(create_app(config)) as live:
        page.goto(live.url + "/")
        page.wait_for_selector("#server-status.ok")
        assert page.is_hidden("#history-card")  # nothing asked yet in this session
        upload_science(page, docs)

        page.select_option("#agent", "naive")
        page.select_option("#scope-select", "science")
        page.fill("#question", "Who built the first compiler?")
        page.click("#ask-button")
        page.wait_for_selector("#run-status.ok:text('done')", timeout=60_000)
        page.wait_for_selector("#history-list .history-item")
        assert page.inner_text("#history-list .history-question") == "Who built the first compiler?"

        # Same tab, page reloaded: the history is still there and shows the answer without asking.
        page.reload()
        page.wait_for_selector("#server-status.ok")
        page.wait_for_selector("#history-list .history-item")
        calls = len(server.requests)
        page.click("#history-list .history-show")
        assert page.inner_text("#run-status") == "from history"
        assert "Grace Hopper built the first compiler" in page.inner_text("#answer")
        assert page.locator("#sources .source.cited").count() == 1
        assert len(server.requests) == calls  # shown again, not asked again

        # Clicking the question asks it again (same agent and scope).
        page.wait_for_selector("#scope-select option[value=science]", state="attached")
        page.click("#history-list .history-question")
        page.wait_for_selector("#run-status.ok:text('done')", timeout=60_000)
        assert len(server.requests) > calls
        assert page.locator("#answer-agent").inner_text() == "NaiveRAG"
        assert page.locator("#history-list .history-item").count() == 1  # one entry per question

        # Delete one source.
        actions = page.locator("#collection-list .collection-actions[data-name=science]")
        actions.locator(".show-sources").click()
        page.wait_for_selector("#collection-list .source-row")
        rows = actions.locator(".source-row")
        assert rows.count() == 3
        victim = rows.first.get_attribute("data-reference")
        rows.first.locator(".delete-source").click()
        page.wait_for_selector("#collection-list .collection[data-name=science] >> text=2 sources")
        # the same wait as a locator's: wait_for_function's string is eval'd in the page once the first
        # check fails (a busy machine), which the page's CSP (no 'unsafe-eval') refuses
        page.locator("#collection-list .source-row").nth(1).wait_for()
        page.locator("#collection-list .source-row").nth(2).wait_for(state="detached")
        with httpx.Client(base_url=live.url) as api:
            left = [row["reference"] for row in api.get("/v1/collections/science/sources").json()]
        assert len(left) == 2 and victim not in left

        # Drop the collection: the first click only asks; Cancel keeps it; Drop drops it.
        actions.locator(".drop-collection").click()
        confirm = actions.locator(".confirm-drop")
        assert confirm.is_visible() and "science" in confirm.inner_text() and "2 sources" in confirm.inner_text()
        confirm.locator(".confirm-no").click()
        assert confirm.is_hidden()
        with httpx.Client(base_url=live.url) as api:
            assert [c["name"] for c in api.get("/v1/collections").json()] == ["science"]
        actions.locator(".drop-collection").click()
        confirm.locator(".confirm-yes").click()
        page.wait_for_selector("#collections-empty:not([hidden])")
        assert "Dropped collection science" in page.inner_text("#banner")
        assert page.input_value("#target-collection") == "__new__"
        with httpx.Client(base_url=live.url) as api:
            assert api.get("/v1/collections").json() == []


def dead_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_pill_says_when_the_llm_is_unreachable(server, tmp_path: Path, milvus_uri: str, page) -> None:
    llm = server.llm_config(retry_base_delay=0.01, max_retries=0, base_url=f"http://127.0.0.1:{dead_port()}/v1")
    config = make_config(tmp_path, milvus_uri, llm)
    with ServerThread(create_app(config)) as live:
        page.goto(live.url + "/")
        page.wait_for_selector("#server-status.ok")  # nothing has called the LLM yet
        upload_science(page, make_docs(tmp_path / "docs"))
        page.select_option("#agent", "naive")
        page.select_option("#scope-select", "science")
        page.fill("#question", "Who built the first compiler?")
        page.click("#ask-button")
        page.wait_for_selector("#run-status.bad", timeout=60_000)
        page.wait_for_selector("#server-status.bad")
        assert page.inner_text("#server-status") == "LLM unreachable"
        title = page.get_attribute("#server-status", "title") or ""
        assert "OpenAI" in title and "OpenAI call failed" in title
        with httpx.Client(base_url=live.url) as api:
            health = api.get("/health").json()
        assert health["llm_provider"] == "OpenAI" and "OpenAI call failed" in health["llm_error"]
