"""`Components`: one immutable object per configuration; init_config swaps one reference."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from deepsearcher import configuration
from deepsearcher.app import Components
from deepsearcher.config import Configuration
from deepsearcher.testing import scripted_llm_fixture

llm = scripted_llm_fixture(name="llm")


def _config(tmp_path: Path, name: str, milvus_uri: str, **extra: object) -> Configuration:
    path = tmp_path / f"{name}.yaml"
    settings = {"provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": milvus_uri}}, **extra}}
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return Configuration(path)


def test_init_config_swaps_one_immutable_object(tmp_path: Path, milvus_uri: str, llm) -> None:
    configuration.init_config(_config(tmp_path, "first", milvus_uri))
    first = configuration.current()
    assert isinstance(first, Components) and first.llm is None and dict(first.agents) == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.vector_db = None  # type: ignore[misc]
    with pytest.raises(TypeError):
        first.agents["auto"] = None  # type: ignore[index]

    other_uri = str(tmp_path / "other.db")
    configuration.init_config(_config(tmp_path, "second", other_uri, llm=llm.llm_config()))
    second = configuration.current()
    try:
        assert second is not first and first.llm is None  # the old object is untouched
        # the module-level names are a facade over the current object, all from the same switch
        assert configuration.vector_db is second.vector_db and configuration.llm is second.llm is not None
        assert configuration.embedding_model is first.embedding_model  # unchanged provider settings: reused
        assert (
            configuration.default_searcher is second.agents["auto"]
            and configuration.naive_rag is second.agents["naive"]
        )
        assert configuration.config is second.config and second.agent("deep") is second.agents["deep"]
        assert all(agent.vector_db is second.vector_db for agent in second.agents.values())
    finally:
        second.vector_db.close()


def test_every_writer_of_a_collection_takes_the_same_process_wide_lock(tmp_path: Path, milvus_uri: str) -> None:
    from helpers import make_docs

    from deepsearcher.app.locks import collection_lock
    from deepsearcher.offline_loading import load_inputs
    from deepsearcher.server.jobs import JobManager

    manager = JobManager(workers=1)
    try:
        assert manager.collection_lock("shared") is collection_lock("shared")  # REST jobs and deletions
    finally:
        manager.shutdown()
    configuration.init_config(_config(tmp_path, "locks", milvus_uri))
    held: list[bool] = []
    try:
        # the CLI and library path (load_inputs) holds it while the pipeline writes
        summary = load_inputs(
            [str(make_docs(tmp_path / "docs"))],
            collection_name="shared",
            on_progress=lambda event, info: held.append(collection_lock("shared").locked()),
        )
        assert summary.chunks_inserted > 0 and held and all(held)
        assert not collection_lock("shared").locked()
    finally:
        configuration.vector_db.close()
