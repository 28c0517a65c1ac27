"""The CLI starts without the libraries a command does not need (no timing: what was imported).

Each case runs the real entry point (`python -m deepsearcher.cli.main ...`) in a fresh
interpreter; an atexit handler registered first records which heavy modules were loaded by
the end, so the test proves the laziness itself, not a duration that depends on the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import make_docs, write_config

from deepsearcher.vector_db.milvus import Milvus

#: Libraries that cost from 0.1 s to seconds to import, and what needs each.
MODEL_STACK = ("onnxruntime", "torch", "sentence_transformers", "transformers", "tokenizers")
LLM_SDKS = ("openai", "anthropic", "litellm", "google.genai", "boto3")
STORE_STACK = ("pymilvus", "milvus_lite", "pandas", "grpc")
HEAVY = (*MODEL_STACK, *LLM_SDKS, *STORE_STACK, "numpy", "jieba", "rich.markdown")

DRIVER = """
import atexit, json, runpy, sys
def record():
    jieba = sys.modules.get("jieba")
    found = {
        "loaded": sorted(name for name in HEAVY if name in sys.modules),
        "jieba_dictionary": bool(jieba is not None and jieba.dt.initialized),
    }
    with open(OUT, "w") as handle:
        json.dump(found, handle)
atexit.register(record)
sys.argv = ["deepsearcher", *sys.argv[1:]]
runpy.run_module("deepsearcher.cli.main", run_name="__main__")
"""


def run_cli(tmp_path: Path, *args: str, config: Path | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "modules.json"
    out.unlink(missing_ok=True)
    code = f"HEAVY = {HEAVY!r}\nOUT = {str(out)!r}\n{DRIVER}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "120"}
    env.pop("DEEPSEARCHER_CONFIG", None)
    if config is not None:
        env["DEEPSEARCHER_CONFIG"] = str(config)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )
    assert out.exists(), f"the atexit handlers did not run: {done.stderr}"
    return done, json.loads(out.read_text())


@pytest.fixture
def config(tmp_path: Path, milvus_uri: str) -> Path:
    """A Milvus Lite store in the temp dir and an OpenAI-compatible LLM configured (never called)."""
    llm = (
        "  llm:\n    provider: OpenAI\n    config:\n      model: m\n"
        '      base_url: "http://127.0.0.1:9/v1"\n      api_key: "unused"\n'
    )
    return write_config(tmp_path / "config.yaml", milvus_uri, llm)


@pytest.mark.parametrize("args", [["--help"], ["providers"], ["collections", "--help"], ["query", "--help"]])
def test_help_and_providers_import_no_model_sdk_or_store(tmp_path: Path, args: list[str]) -> None:
    done, found = run_cli(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    loaded = set(found["loaded"]) - {"rich.markdown"}  # typer draws its help with it
    assert not loaded, f"`deepsearcher {' '.join(args)}` imported {sorted(loaded)}"


def test_collections_list_of_a_store_not_created_yet_opens_nothing(tmp_path: Path, config: Path) -> None:
    done, found = run_cli(tmp_path, "collections", "list", "--json", config=config)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    loaded = set(found["loaded"])
    assert not loaded & {"pymilvus", "milvus_lite", *MODEL_STACK, *LLM_SDKS}, f"imported {sorted(loaded)}"


def test_collections_list_opens_the_store_and_nothing_else(tmp_path: Path, config: Path, milvus_uri: str) -> None:
    store = Milvus(uri=milvus_uri)
    store.init_collection(dim=4, collection="notes", description="field notes", embedding_model="toy")
    store.close()
    done, found = run_cli(tmp_path, "collections", "list", "--json", config=config)
    assert done.returncode == 0, done.stderr
    assert [row["name"] for row in json.loads(done.stdout)] == ["notes"]
    loaded = set(found["loaded"])
    assert {"pymilvus", "milvus_lite"} <= loaded  # the store it lists
    assert not loaded & {*MODEL_STACK, *LLM_SDKS}, f"imported {sorted(loaded & {*MODEL_STACK, *LLM_SDKS})}"
    assert "rich.markdown" not in loaded
    assert found["jieba_dictionary"] is False  # nothing was tokenised: the ~1 s dictionary stays unread


def test_search_loads_the_model_but_no_llm_sdk_and_says_at_once_it_started(tmp_path: Path, config: Path) -> None:
    docs = make_docs(tmp_path / "docs")
    loaded_docs, _ = run_cli(tmp_path, "load", str(docs / "records.jsonl"), "--json", config=config)
    assert loaded_docs.returncode == 0, loaded_docs.stderr
    done, found = run_cli(tmp_path, "search", "first compiler", "--top-k", "1", config=config)
    assert done.returncode == 0, done.stderr
    assert "Grace Hopper" in done.stdout
    assert done.stderr.startswith("Searching…")  # the first line, before the store and model open
    loaded = set(found["loaded"])
    assert "onnxruntime" in loaded and not loaded & {"torch", "sentence_transformers", *LLM_SDKS}
    quiet, _ = run_cli(tmp_path, "search", "first compiler", "--json", config=config)
    assert quiet.returncode == 0 and "Searching" not in quiet.stderr  # --json output is for programs


def test_the_fast_exit_keeps_the_data_the_status_and_the_output(tmp_path: Path, config: Path) -> None:
    """The entry point leaves with os._exit after the atexit handlers: what one process
    wrote is there for the next, the exit status is the command's, and no output is lost."""
    docs = make_docs(tmp_path / "docs")
    loaded, _ = run_cli(tmp_path, "load", str(docs), "--collection", "notes", "--json", config=config)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["chunks_inserted"] == 4
    listed, _ = run_cli(tmp_path, "collections", "list", "--json", config=config)
    assert listed.returncode == 0, listed.stderr
    assert [(c["name"], c["sources"]) for c in json.loads(listed.stdout)] == [("notes", 3)]
    missing, _ = run_cli(tmp_path, "collections", "drop", "nope", "--yes", config=config)
    # the error reaches the terminal before os._exit: status and message both survive
    assert missing.returncode == 1, missing.stderr
    assert "Collection 'nope' does not exist (existing: notes)" in " ".join(missing.stderr.split())


def test_query_warm_up_loads_the_local_model_jieba_only_for_chinese_and_never_calls_a_remote_model() -> None:
    import jieba
    import milvus_lite  # noqa: F401  # as in a query on Milvus Lite: its server runs in this process

    from deepsearcher.cli.warm_up import warm_up_in_background
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding
    from deepsearcher.embedding.openai_embedding import OpenAIEmbedding

    local = MiniLMEmbedding()
    english = warm_up_in_background(SimpleNamespace(embedding_model=local), "Who built the first compiler?")
    assert [t.name for t in english] == ["warm-up embedding model"]  # no Chinese to cut: jieba stays unread
    chinese = warm_up_in_background(SimpleNamespace(embedding_model=local), "谁发明了第一个编译器？")
    assert sorted(t.name for t in chinese) == ["warm-up embedding model", "warm-up jieba dictionary"]
    for thread in english + chinese:
        thread.join(timeout=120)
        assert not thread.is_alive()
    assert jieba.dt.initialized
    assert local.inner._session is not None  # loaded once, ahead: the first search finds it ready
    remote = OpenAIEmbedding(model="text-embedding-3-small", api_key="unused", base_url="http://127.0.0.1:9/v1")
    names = [t.name for t in warm_up_in_background(SimpleNamespace(embedding_model=remote), "谁？")]
    assert "warm-up embedding model" not in names  # a request (maybe billed) for nothing


def test_query_says_at_once_it_started_and_answers(tmp_path: Path, milvus_uri: str) -> None:
    from deepsearcher.testing import ScriptedLLMServer

    docs = make_docs(tmp_path / "docs")
    with ScriptedLLMServer(fallback="NO") as server:
        server.on("numbered sources", "Grace Hopper built it [1].")
        settings = {"llm": server.llm_config(), "vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}}}
        config = tmp_path / "query.yaml"
        config.write_text(json.dumps({"provide_settings": settings}), encoding="utf-8")
        loaded, _ = run_cli(tmp_path, "load", str(docs), "--json", config=config)
        assert loaded.returncode == 0, loaded.stderr
        done, found = run_cli(tmp_path, "query", "Who built the first compiler?", "--agent", "naive", config=config)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("Preparing…")  # before the store, the model and the LLM SDK load
    assert "Grace Hopper built it [1]." in done.stdout
    loaded_modules = set(found["loaded"])
    assert {"openai", "onnxruntime"} <= loaded_modules and not loaded_modules & {"torch", "sentence_transformers"}


def test_init_config_can_leave_the_llm_unbuilt_but_still_checks_its_name(tmp_path: Path, config: Path) -> None:
    from deepsearcher import configuration
    from deepsearcher.config import Configuration
    from deepsearcher.config.registry import UnknownProviderError
    from deepsearcher.types.errors import NotReadyError

    try:
        configuration.init_config(Configuration(config), skip=("llm",))
        assert configuration.llm is None and configuration.agents == {}
        with pytest.raises(NotReadyError, match="not set up: this command does not use it"):
            configuration.require_llm()
        configuration.init_config(Configuration(config))
        assert type(configuration.llm).__name__ == "OpenAI"
        typo = Configuration(config)
        typo.set_provider_config("llm", "OpenAl", {})
        with pytest.raises(UnknownProviderError, match="Did you mean 'OpenAI'"):
            configuration.init_config(typo, skip=("llm",))
    finally:
        if configuration.vector_db is not None:
            configuration.vector_db.close()
