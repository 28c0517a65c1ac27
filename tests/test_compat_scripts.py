"""Scripts written the way DeepSearcher's README and examples/ write them, run verbatim
(runpy, in this process) against the scripted LLM server and a Milvus Lite file in a temp
working directory. Only the LLM's base_url/api_key (the stand-in server) and the crawler's
private-network switch (the test site is on 127.0.0.1) differ from a user's script."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from helpers import make_docs
from website_server import LocalServer, Reply

from deepsearcher import configuration
from deepsearcher.testing import scripted_llm_fixture

server = scripted_llm_fixture(name="server", fallback="NO")

BASIC_EXAMPLE = """
import logging
import os

from deepsearcher.configuration import Configuration, init_config
from deepsearcher.offline_loading import load_from_local_files
from deepsearcher.online_query import naive_rag_query, naive_retrieve, query, retrieve
from deepsearcher.utils import log

httpx_logger = logging.getLogger("httpx")  # disable openai's logger output
httpx_logger.setLevel(logging.WARNING)

current_dir = os.path.dirname(os.path.abspath(__file__))

config = Configuration()  # Customize your config here
config.set_provider_config("llm", "OpenAI", {"model": "gpt-4o-mini", "base_url": "@URL@", "api_key": "sk-test"})
config.set_provider_config("vector_db", "Milvus", {"uri": "./milvus.db", "token": ""})
init_config(config=config)

# You should clone the milvus docs repo to your local machine first, execute:
load_from_local_files(
    paths_or_directory=os.path.join(current_dir, "data"),
    collection_name="science",
    collection_description="People and things of science",
    force_new_collection=True,
    chunk_size=1500,
    chunk_overlap=100,
    batch_size=64,
)

question = "Who built the first compiler?"
log.set_dev_mode(True)
log.info("asking " + question)
answer, refs, consumed_tokens = query(question, max_iter=1)
log.color_print("\\n==== FINAL ANSWER====\\n")
log.color_print(answer)
for i, ref in enumerate(refs):
    log.color_print(f"{i + 1}. {ref.text[:60]}… {ref.reference}")

retrieved, _, retrieve_tokens = retrieve(question, max_iter=1)
chunks = naive_retrieve(question, collection="science", top_k=2)
naive_answer, naive_refs = naive_rag_query(question, collection="science", top_k=3)
RESULTS = {
    "answer": answer, "refs": refs, "tokens": consumed_tokens,
    "retrieved": retrieved, "retrieve_tokens": retrieve_tokens,
    "chunks": chunks, "naive_answer": naive_answer, "naive_refs": naive_refs,
}
"""

WEBSITE_EXAMPLE = """
from deepsearcher.configuration import Configuration, init_config
from deepsearcher.offline_loading import load_from_website
from deepsearcher.online_query import query

config = Configuration()
config.set_provider_config("llm", "OpenAI", {"model": "gpt-4o-mini", "base_url": "@URL@", "api_key": "sk-test"})
config.set_provider_config("web_crawler", "HttpCrawler", {"allow_private_network": True, "respect_robots": False})
config.set_provider_config("vector_db", "Milvus", {"uri": "./milvus.db", "token": ""})
init_config(config=config)

website_url = "@SITE@"
load_from_website(urls=website_url, collection_name="moss", collection_description="Mosses", force_new_collection=True)

result = query("How much water can sphagnum hold?", max_iter=1)
"""


def run_script(tmp_path: Path, text: str, **values: str) -> dict:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    script = tmp_path / "example.py"
    script.write_text(text, encoding="utf-8")
    return runpy.run_path(str(script), run_name="__main__")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield tmp_path
    from deepsearcher.utils import log

    log.set_dev_mode(False)
    if configuration.vector_db is not None:
        configuration.vector_db.close()


def script_hopper(server) -> None:
    server.on("You route a question", "1")
    server.on("Break the question below", '["first compiler"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    server.on("These queries were already searched", "[]")
    server.on("Answer the question using only the numbered sources", "Grace Hopper built the A-0 system [1].")


def test_basic_example_runs_unchanged(workdir: Path, server) -> None:
    make_docs(workdir / "data")
    script_hopper(server)
    results = run_script(workdir, BASIC_EXAMPLE, URL=server.base_url)["RESULTS"]
    assert (workdir / "milvus.db").exists()  # "./milvus.db": in the working directory
    assert results["answer"].startswith("Grace Hopper built the A-0 system") and results["tokens"] > 0
    assert results["refs"] and all("Hopper" in ref.text for ref in results["refs"])
    assert any("Hopper" in r.text for r in results["retrieved"]) and results["retrieve_tokens"] > 0
    assert len(results["chunks"]) == 2 and "Hopper" in results["chunks"][0].text
    assert results["naive_answer"].startswith("Grace Hopper") and len(results["naive_refs"]) == 3


def test_website_example_runs_unchanged(workdir: Path, server) -> None:
    page = "<html><head><title>Moss</title></head><body><p>Sphagnum moss can hold twenty times its weight in water.</p>"
    server.on("You route a question", "1")
    server.on("Break the question below", '["sphagnum water"]')
    server.on("Does the passage below contain", lambda r: "YES" if "Sphagnum" in r.last_user_message else "NO")
    server.on("These queries were already searched", "[]")
    server.on("Answer the question using only the numbered sources", "About twenty times its weight [1].")
    with LocalServer({"/moss": Reply(page)}) as site:
        namespace = run_script(workdir, WEBSITE_EXAMPLE, URL=server.base_url, SITE=site.url("/moss"))
    answer, refs, tokens = namespace["result"]
    assert answer == "About twenty times its weight [1]." and tokens > 0
    assert [ref.reference for ref in refs] == [site.url("/moss")]
