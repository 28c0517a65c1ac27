"""DeepSearcher's own collections (`_deepsearcher_*`) cannot be written through any door, and a store
whose metadata collection something else created still lists its collections.

Real Milvus Lite stores in temp dirs; the REST API on loopback; the CLI, MCP tools and Python API in
process.
"""

from __future__ import annotations

import json
from pathlib import Path

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
from deepsearcher.types.errors import ConfigurationError
from deepsearcher.vector_db._milvus_meta import META_COLLECTION

runner = CliRunner()
RESERVED = "_deepsearcher_collections"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    docs = make_docs(tmp_path / "docs")
    path = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}}},
        "server": {"allowed_roots": [str(tmp_path)], "data_dir": str(tmp_path / "data")},
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path, docs


def test_a_reserved_name_is_refused_by_every_front_end(setup: tuple[Path, Path]) -> None:
    config, docs = setup
    expected = "names starting with '_deepsearcher_' are reserved"

    cli = runner.invoke(app, ["load", str(docs), "--collection", RESERVED, "-c", str(config)])
    assert cli.exit_code != 0 and expected in " ".join(cli.output.split())

    with pytest.raises(ConfigurationError, match=expected):
        DeepSearcherTools(components_for(config, skip=("llm",))).load([str(docs)], collection="_DeepSearcher_x")

    from deepsearcher import configuration
    from deepsearcher.offline_loading import load_from_local_files

    configuration.init_config(Configuration(config), skip=("llm",))
    try:
        with pytest.raises(ConfigurationError, match=expected):
            load_from_local_files(str(docs), collection_name=RESERVED)
    finally:
        configuration.current().close()

    with ServerThread(create_app(Configuration(config))) as running, httpx.Client(base_url=running.url) as rest:
        for response in (
            rest.post("/v1/load", json={"inputs": [str(docs)], "collection": RESERVED}),
            rest.post("/load-files/", json={"paths": [str(docs)], "collection_name": RESERVED}),
            rest.post("/v1/documents", files={"files": ("a.txt", b"text")}, data={"collection": RESERVED}),
            rest.delete(f"/v1/collections/{RESERVED}"),
        ):
            assert response.status_code == 400, response.text
            assert expected in response.json()["error"]
        assert rest.get("/v1/collections").json() == []


def test_a_metadata_collection_created_by_something_else_does_not_break_listing(setup: tuple[Path, Path]) -> None:
    config, docs = setup
    loaded = runner.invoke(app, ["load", str(docs), "--collection", "science", "-c", str(config)])
    assert loaded.exit_code == 0, loaded.output
    components = components_for(config, skip=("llm",))
    # what an older version let `POST /v1/load {"collection": "_deepsearcher_collections"}` do
    components.vector_db.client.create_collection(META_COLLECTION, dimension=4)
    components.close()

    listed = runner.invoke(app, ["collections", "list", "-c", str(config), "--json"])
    assert listed.exit_code == 0, listed.output
    assert [row["name"] for row in json.loads(listed.stdout)] == ["science"]
    with ServerThread(create_app(Configuration(config))) as running, httpx.Client(base_url=running.url) as rest:
        response = rest.get("/v1/collections")
        assert response.status_code == 200 and [row["name"] for row in response.json()] == ["science"]
