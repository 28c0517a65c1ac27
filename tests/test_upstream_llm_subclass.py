"""A DeepSearcher-style LLM subclass (only a synchronous `chat(messages) -> ChatResponse`, its
own `__init__` without `super().__init__()`) runs our agents, the CLI and the Python API.

The user's class here talks to the scripted OpenAI-compatible server over real HTTP with httpx,
as a user's own wrapper of some API would."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import yaml
from helpers import make_docs

from deepsearcher.llm.base import BaseLLM, ChatResponse
from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="NO")

#: The user's module, as DeepSearcher's README tells them to write it.
MY_MODULE = textwrap.dedent(
    """
    import threading
    from typing import Dict, List

    import httpx

    from deepsearcher.llm.base import BaseLLM, ChatResponse

    THREADS = []


    class MyLLM(BaseLLM):
        def __init__(self, model: str = "my-model", base_url: str = "", **kwargs):
            # DeepSearcher's base had an empty __init__: user classes often never call it.
            self.model = model
            self.base_url = base_url

        def chat(self, messages: List[Dict]) -> ChatResponse:
            THREADS.append(threading.current_thread().name)
            reply = httpx.post(
                self.base_url + "/chat/completions",
                json={"model": self.model, "messages": messages},
                timeout=30,
            ).json()
            return ChatResponse(reply["choices"][0]["message"]["content"], reply["usage"]["total_tokens"])
    """
)


def script_answers(server) -> None:
    server.on("Break the question below", '["first compiler"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on("These queries were already searched", "[]")
    server.on("Answer the question using only the numbered sources", "Grace Hopper built it [1].")


@pytest.fixture
def user_module(tmp_path: Path) -> Path:
    folder = tmp_path / "user_code"
    folder.mkdir()
    (folder / "my_module.py").write_text(MY_MODULE, encoding="utf-8")
    return folder


@pytest.fixture
def config_file(tmp_path: Path, server, milvus_uri: str) -> Path:
    settings = {
        "provide_settings": {
            "llm": {"provider": "my_module.MyLLM", "config": {"model": "mine", "base_url": server.base_url}},
            "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}},
        }
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def test_a_class_with_only_chat_and_no_super_init_gets_limits_and_counters(server) -> None:
    class Echo(BaseLLM):
        def __init__(self) -> None:  # never calls BaseLLM.__init__
            self.seen: list[str] = []

        def chat(self, messages):  # noqa: ANN001, ANN201 - as users write it
            self.seen.append(messages[-1]["content"])
            return ChatResponse("pong", 3)

    llm = Echo()
    assert llm.model == "" and llm.max_concurrency > 0 and llm.calls == 0
    reply = asyncio.run(llm.achat("ping"))
    assert reply.content == "pong" and llm.seen == ["ping"]
    assert llm.calls == 1 and llm.usage_total.total_tokens == 3
    stream = llm.stream("again")
    assert "".join(stream) == "pong" and stream.usage.total_tokens == 3


def test_the_sync_chat_runs_off_the_event_loop() -> None:
    class Slow(BaseLLM):
        def chat(self, messages):  # noqa: ANN001, ANN201
            time.sleep(0.3)
            return ChatResponse(threading.current_thread().name)

    async def main() -> tuple[list[str], float, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.02)
                ticks += 1

        task = asyncio.create_task(ticker())
        started = time.perf_counter()
        replies = await asyncio.gather(*(Slow().achat("x") for _ in range(3)))
        task.cancel()
        return [r.content for r in replies], time.perf_counter() - started, ticks

    names, _, ticks = asyncio.run(main())
    assert all(name != threading.main_thread().name for name in names)
    assert ticks >= 5, "the event loop was blocked while chat() ran"


def test_a_class_with_neither_chat_nor_achat_once_is_refused_by_name() -> None:
    class Empty(BaseLLM):
        pass

    with pytest.raises(TypeError, match=r"Can't instantiate abstract class Empty .*_achat_once"):
        Empty()


def test_chat_returning_something_else_is_a_clear_error() -> None:
    class Wrong(BaseLLM):
        def chat(self, messages):  # noqa: ANN001, ANN201
            return 42

    with pytest.raises(Exception, match="Wrong.chat returned int; it must return a ChatResponse"):
        asyncio.run(Wrong().achat("x"))


def test_deepsearcher_query_with_the_user_class_from_config(
    tmp_path: Path, server, user_module: Path, config_file: Path
) -> None:
    docs = make_docs(tmp_path / "docs")
    script_answers(server)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(user_module), os.environ.get("PYTHONPATH", "")])}
    env.pop("OPENAI_API_KEY", None)
    cli = [sys.executable, "-m", "deepsearcher.cli.main"]
    load = subprocess.run(
        [*cli, "load", str(docs), "-c", str(config_file)], capture_output=True, text=True, env=env, timeout=300
    )
    assert load.returncode == 0, load.stdout + load.stderr
    done = subprocess.run(
        [*cli, "query", "Who built the first compiler?", "--agent", "deep", "--max-iter", "1", "-c", str(config_file)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Grace Hopper built it" in done.stdout
    models = {request.model for request in server.requests}
    assert models == {"mine"}, "every LLM call went through the user's class"


def test_the_python_api_with_the_user_class(
    tmp_path: Path, server, user_module: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(user_module))
    from deepsearcher import configuration
    from deepsearcher.configuration import Configuration, init_config
    from deepsearcher.offline_loading import load_from_local_files
    from deepsearcher.online_query import query

    config = Configuration(str(config_file))
    config.set_provider_config("llm", "my_module.MyLLM", {"model": "mine-api", "base_url": server.base_url})
    init_config(config=config)
    try:
        import my_module

        load_from_local_files(paths_or_directory=str(make_docs(tmp_path / "docs")))
        script_answers(server)
        server.on("You route a question", "1")
        answer, retrieved, tokens = query("Who built the first compiler?", max_iter=1)
        assert answer.startswith("Grace Hopper built it") and tokens > 0
        assert retrieved and all("Hopper" in r.text for r in retrieved)
        assert type(configuration.llm).__name__ == "MyLLM"
        assert my_module.THREADS and threading.main_thread().name not in my_module.THREADS
    finally:
        configuration.vector_db.close()
