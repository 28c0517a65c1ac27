"""The same question through the CLI, the REST API and MCP: the same answer, defaults and errors.

One config (query_settings: agent deep, max_tokens 1, max_iter 3), one store loaded once,
the scripted LLM server answering; each front-end is a thin adapter over the same use cases
(loading too: the same folder gives the same summary, the same bad input the same refusal).
MCP is driven through its tool methods (the stdio transport is covered by test_mcp_server).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from helpers import components_for, make_docs
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.config import Configuration
from deepsearcher.mcp_server import DeepSearcherTools
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread
from deepsearcher.testing import scripted_llm_fixture
from deepsearcher.types.errors import DeepSearcherError

llm = scripted_llm_fixture(name="llm", scope="module", fallback="NO")
runner = CliRunner()
QUESTION = "Who built the first compiler?"


class Refused(Exception):
    """A front-end's refusal: its HTTP status or exit code and its message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def write_settings(base: Path, llm: Any, query_settings: dict[str, Any], **server: Any) -> Path:
    """`base`/config.yaml: the scripted LLM, a Milvus Lite store in `base`, these query settings."""
    settings = {
        "provide_settings": {
            "llm": llm.llm_config(retry_base_delay=0.01, max_retries=0),
            "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
        },
        "query_settings": query_settings,
        "server": {"data_dir": str(base / "data"), "allowed_roots": [str(base)], **server},
    }
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def config_path(tmp_path_factory: pytest.TempPathFactory, llm) -> Path:
    base = tmp_path_factory.mktemp("frontends")
    path = write_settings(base, llm, {"agent": "deep", "max_tokens": 1, "max_iter": 3})
    loaded = runner.invoke(app, ["load", str(make_docs(base / "docs")), "--collection", "science", "-c", str(path)])
    assert loaded.exit_code == 0, loaded.output
    return path


@pytest.fixture(scope="module")
def rest(config_path: Path) -> Any:
    with ServerThread(create_app(Configuration(config_path))) as running:
        with httpx.Client(base_url=running.url, timeout=120) as client:
            yield client


def mcp_tools(config_path: Path) -> DeepSearcherTools:
    """What `deepsearcher mcp -c` serves: the tools over the components it builds at start."""
    return DeepSearcherTools(components_for(config_path))


def ask_cli(config_path: Path, rest: Any, collections: list[str]) -> dict[str, Any]:
    args = ["query", QUESTION, "-c", str(config_path), "--json"]
    for name in collections:
        args += ["--collection", name]
    result = runner.invoke(app, args)
    if result.exit_code != 0:
        raise Refused(result.exit_code, result.output)
    return json.loads(result.stdout)


def ask_rest(config_path: Path, rest: Any, collections: list[str]) -> dict[str, Any]:
    response = rest.post("/v1/query", json={"question": QUESTION, "collections": collections})
    if response.status_code != 200:
        raise Refused(response.status_code, response.json()["error"])
    return response.json()


def ask_mcp(config_path: Path, rest: Any, collections: list[str]) -> dict[str, Any]:
    try:
        return mcp_tools(config_path).deep_search(QUESTION, collections=collections)
    except DeepSearcherError as exc:
        raise Refused(exc.exit_code, str(exc)) from exc


FRONT_ENDS = {"cli": ask_cli, "rest": ask_rest, "mcp": ask_mcp}


def script(llm: Any) -> None:
    llm.reset()
    llm.on("Break the question below", '["first compiler"]')
    llm.on("Does the passage below contain", lambda r: "YES" if "Hopper" in r.last_user_message else "NO")
    llm.on("These queries were already searched", '["more"]')
    llm.on("Answer the question using only the numbered sources", cite)


def cite(request: Any) -> str:
    match = re.search(r"\[(\d+)\] \(Grace Hopper\)", request.last_user_message)
    return f"Grace Hopper built it [{match.group(1)}]." if match else "Not found."


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_the_same_question_gets_the_same_answer_and_defaults(front_end: str, config_path: Path, rest: Any, llm) -> None:
    script(llm)
    result = FRONT_ENDS[front_end](config_path, rest, ["science"])
    assert result["agent"] == "DeepSearch"  # query_settings.agent, no agent given
    assert result["stopped_by_budget"] is True  # query_settings.max_tokens, honoured over HTTP too
    assert result["answer"].startswith("Grace Hopper built it [")
    assert [s["title"] for s in result["sources"] if s["cited"]] == ["Grace Hopper"]


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_the_same_missing_collection_gets_the_same_error(front_end: str, config_path: Path, rest: Any, llm) -> None:
    script(llm)
    with pytest.raises(Refused) as refused:
        FRONT_ENDS[front_end](config_path, rest, ["nowhere"])
    assert refused.value.code == {"cli": 1, "rest": 404, "mcp": 1}[front_end]
    assert "nowhere" in refused.value.message and "science" in refused.value.message


# ---------------------------------------------------------------------- loading


def load_cli(config_path: Path, rest: Any, inputs: list[str], collection: str) -> dict[str, Any]:
    result = runner.invoke(app, ["load", *inputs, "--collection", collection, "-c", str(config_path), "--json"])
    if result.exit_code not in (0, 1) or not result.stdout.startswith("{"):
        raise Refused(result.exit_code, result.output)
    return json.loads(result.stdout)


def load_rest(config_path: Path, rest: Any, inputs: list[str], collection: str) -> dict[str, Any]:
    response = rest.post("/v1/load", json={"inputs": inputs, "collection": collection})
    if response.status_code != 202:
        raise Refused(response.status_code, response.json()["error"])
    deadline = time.monotonic() + 120
    while (job := rest.get(response.json()["status_url"]).json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    return job["results"]


def load_mcp(config_path: Path, rest: Any, inputs: list[str], collection: str) -> dict[str, Any]:
    try:
        return mcp_tools(config_path).load(inputs, collection=collection)
    except DeepSearcherError as exc:
        raise Refused(exc.exit_code, str(exc)) from exc


LOADERS = {"cli": load_cli, "rest": load_rest, "mcp": load_mcp}


@pytest.mark.parametrize("front_end", sorted(LOADERS))
def test_the_same_folder_loads_the_same_way(front_end: str, config_path: Path, rest: Any) -> None:
    docs = str(config_path.parent / "docs")
    first = LOADERS[front_end](config_path, rest, [docs], f"load_{front_end}")
    assert sorted(Path(source).name for source in first["loaded"]) == ["bread.txt", "records.jsonl", "volcano.md"]
    assert first["chunks_inserted"] >= 3 and first["failed"] == []
    again = LOADERS[front_end](config_path, rest, [docs], f"load_{front_end}")
    assert again["loaded"] == [] and len(again["skipped_unchanged"]) == 3 and again["chunks_inserted"] == 0


@pytest.mark.parametrize("front_end", sorted(LOADERS))
def test_the_same_bad_input_gets_the_same_refusal(front_end: str, config_path: Path, rest: Any) -> None:
    docs = str(config_path.parent / "docs")
    with pytest.raises(Refused) as refused:
        LOADERS[front_end](config_path, rest, [docs, "ftp://example.com/a.txt"], f"refused_{front_end}")
    assert refused.value.code == {"cli": 2, "rest": 400, "mcp": 2}[front_end]
    assert "Only http and https URLs can be loaded" in refused.value.message
    assert not components_for(config_path).vector_db.has_collection(f"refused_{front_end}")  # nothing was read


# ---------------------------------------------------------------------- nothing to search


@pytest.fixture(scope="module")
def bare_config(tmp_path_factory: pytest.TempPathFactory, llm) -> Path:
    """A store with nothing loaded, and the `auto` agent: its router would call the LLM first."""
    return write_settings(tmp_path_factory.mktemp("bare"), llm, {"agent": "auto"})


@pytest.fixture(scope="module")
def bare_rest(bare_config: Path) -> Any:
    with ServerThread(create_app(Configuration(bare_config))) as running:
        with httpx.Client(base_url=running.url, timeout=120) as client:
            yield client


def arrange_store(config_path: Path, empty_collections: list[str]) -> None:
    """Exactly `empty_collections` in the store, each created and holding no chunk."""
    components = components_for(config_path, skip=("llm",))
    store, dim = components.vector_db, components.embedding_model.dimension
    for info in store.list_collections():
        store.clear_db(info.collection_name)
    for name in empty_collections:
        store.init_collection(dim=dim, collection=name, description=f"{name} (nothing loaded)")


NOTHING_LOADED = {
    # what is in the store, the collections asked for, what the refusal must name
    "no_collection": ([], [], "nothing is loaded yet"),
    "every_collection_empty": (["empty_a", "empty_b"], [], "nothing is loaded in collections 'empty_a', 'empty_b'"),
    "asked_collection_empty": (["empty_a", "empty_b"], ["empty_b"], "nothing is loaded in collection 'empty_b'"),
}


@pytest.mark.parametrize("case", sorted(NOTHING_LOADED))
@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_nothing_loaded_is_the_same_refusal_before_any_llm_call(
    front_end: str, case: str, bare_config: Path, bare_rest: Any, llm
) -> None:
    in_store, asked, named = NOTHING_LOADED[case]
    arrange_store(bare_config, in_store)
    llm.reset()
    llm.on("", "The auto router would pick an agent here.")  # any call at all would be answered, and counted
    with pytest.raises(Refused) as refused:
        FRONT_ENDS[front_end](bare_config, bare_rest, asked)
    assert refused.value.code == {"cli": 1, "rest": 409, "mcp": 1}[front_end]
    message = " ".join(refused.value.message.split())  # the CLI's console wraps long lines
    assert "Nothing to search:" in message
    assert named in message and "deepsearcher load PATH --collection" in message
    assert llm.call_count == 0  # not even the auto agent's routing call


def test_a_key_whose_collections_are_empty_or_missing_gets_the_refusal_too(tmp_path: Path, llm) -> None:
    """REST alone has API keys: a key may use only an empty collection and one never created,
    while another collection holds documents; its question is refused (409) and costs no LLM call."""
    reader = {"key": "reader-key-0123456789", "name": "reader", "collections": ["empty_a", "later"]}
    path = write_settings(tmp_path, llm, {"agent": "auto"}, api_keys=[reader])
    loaded = runner.invoke(app, ["load", str(make_docs(tmp_path / "docs")), "--collection", "science", "-c", str(path)])
    assert loaded.exit_code == 0, loaded.output
    components = components_for(path, skip=("llm",))
    components.vector_db.init_collection(dim=components.embedding_model.dimension, collection="empty_a")
    llm.reset()
    with ServerThread(create_app(Configuration(path))) as running:
        headers = {"Authorization": "Bearer reader-key-0123456789"}
        with httpx.Client(base_url=running.url, timeout=120, headers=headers) as client:
            response = client.post("/v1/query", json={"question": QUESTION})
    assert response.status_code == 409, response.text
    message = response.json()["error"]
    assert "nothing is loaded in collection 'empty_a'" in message and "science" not in message
    assert llm.call_count == 0


# ---------------------------------------------------------------------- searching and collections


def search_cli(config_path: Path, rest: Any, text: str, collection: str | None) -> dict[str, Any]:
    args = ["search", text, "-k", "3", "-c", str(config_path), "--json"]
    result = runner.invoke(app, args + (["--collection", collection] if collection else []))
    if result.exit_code != 0:
        raise Refused(result.exit_code, result.output)
    return json.loads(result.stdout)


def search_rest(config_path: Path, rest: Any, text: str, collection: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": text, "top_k": 3, **({"collections": [collection]} if collection else {})}
    response = rest.post("/v1/search", json=body)
    if response.status_code != 200:
        raise Refused(response.status_code, response.json()["error"])
    return response.json()


def search_mcp(config_path: Path, rest: Any, text: str, collection: str | None) -> dict[str, Any]:
    try:
        return mcp_tools(config_path).search(text, collection=collection, top_k=3)
    except DeepSearcherError as exc:
        raise Refused(exc.exit_code, str(exc)) from exc


SEARCHERS = {"cli": search_cli, "rest": search_rest, "mcp": search_mcp}


@pytest.mark.parametrize("collection", [None, "science"])
def test_the_same_search_finds_the_same_passages(config_path: Path, rest: Any, collection: str | None) -> None:
    """No collection named means every loaded one, on each front-end; each hit shows its matching passage."""
    found = {name: searcher(config_path, rest, "first compiler", collection) for name, searcher in SEARCHERS.items()}
    assert found["cli"] == found["rest"] == found["mcp"]
    response = found["cli"]
    assert "science" in response["collections"] and (collection is None or response["collections"] == ["science"])
    top = response["results"][0]
    assert top["title"] == "Grace Hopper" and "compiler" in top["passage"].lower()
    assert [hit["rank"] for hit in response["results"]] == [1, 2, 3]


def test_the_same_wrong_collection_is_refused_the_same_way_by_search(config_path: Path, rest: Any) -> None:
    refusals = {}
    for name, searcher in SEARCHERS.items():
        with pytest.raises(Refused) as refused:
            searcher(config_path, rest, "first compiler", "nowhere")
        refusals[name] = (refused.value.code, " ".join(refused.value.message.split()))
    assert {code for code, _ in refusals.values()} <= {1, 404}
    assert all(
        "Collection 'nowhere' does not exist" in message and "science" in message for _, message in refusals.values()
    )


def test_the_same_collections_are_listed(config_path: Path, rest: Any) -> None:
    listed = runner.invoke(app, ["collections", "list", "-c", str(config_path), "--json"])
    assert listed.exit_code == 0, listed.output
    cli = json.loads(listed.stdout)
    assert cli == rest.get("/v1/collections").json() == mcp_tools(config_path).list_collections()["collections"]
    science = next(row for row in cli if row["name"] == "science")
    assert science["sources"] == 3 and science["dim"] == 384 and science["description"] == ""
    assert rest.get("/v1/collections/science").json() == science


def test_drop_and_delete_source_go_through_one_use_case(config_path: Path, rest: Any, tmp_path: Path) -> None:
    """CLI and REST drop and delete through app.collections (MCP has no destructive tools)."""
    docs = make_docs(tmp_path / "docs")
    for name in ("drop_cli", "drop_rest"):
        loaded = runner.invoke(app, ["load", str(docs), "--collection", name, "-c", str(config_path)])
        assert loaded.exit_code == 0, loaded.output
    bread = str(docs / "bread.txt")
    deleted = runner.invoke(app, ["delete", bread, "--collection", "drop_cli", "-c", str(config_path)])
    assert deleted.exit_code == 0 and "Deleted" in deleted.output
    response = rest.request("DELETE", "/v1/sources", json={"collection": "drop_rest", "reference": bread})
    assert response.status_code == 200 and response.json()["deleted"] >= 1
    sources = {
        name: [s["reference"] for s in rest.get(f"/v1/collections/{name}/sources").json()]
        for name in ("drop_cli", "drop_rest")
    }
    assert (
        sources["drop_cli"] == sources["drop_rest"]
        and bread not in sources["drop_cli"]
        and len(sources["drop_cli"]) == 2
    )
    dropped = runner.invoke(app, ["collections", "drop", "drop_cli", "--yes", "-c", str(config_path)])
    assert dropped.exit_code == 0, dropped.output
    assert rest.delete("/v1/collections/drop_rest").json() == {"deleted": "drop_rest"}
    names = {row["name"] for row in rest.get("/v1/collections").json()}
    assert not {"drop_cli", "drop_rest"} & names
    missing = runner.invoke(app, ["collections", "drop", "drop_cli", "--yes", "-c", str(config_path)])
    assert missing.exit_code == 1 and "does not exist" in missing.output
    assert rest.delete("/v1/collections/drop_cli").status_code == 404
