"""Shared fixtures: the real local embedding model, a real Milvus Lite store in a temp dir, and
real Milvus servers on loopback (started once per session, on first use)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test`'s xdist workers start with COLUMNS=80 and LINES=24 in their environment, which a
    # serial run does not have; rich fixes a console's width from COLUMNS when the CLI's console is
    # created at import, so every table would be cut at 80 columns whatever width a test then asks for.
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


@pytest.fixture(scope="session")
def embedding():
    """The bundled all-MiniLM-L6-v2 model, loaded once per test session (it takes seconds)."""
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding

    return MiniLMEmbedding()


@pytest.fixture
def science_store(tmp_path: Path, milvus_uri: str, embedding):  # noqa: ANN201 - a Milvus store
    """A Milvus Lite store with helpers.make_docs loaded into collection 'science'."""
    from helpers import make_docs

    from deepsearcher.loader.file_loader.file_loader import FileLoader
    from deepsearcher.offline_loading.pipeline import IngestionPipeline
    from deepsearcher.offline_loading.sources import iter_file_sources
    from deepsearcher.vector_db.milvus import Milvus

    db = Milvus(uri=milvus_uri)
    IngestionPipeline(embedding, db).run(
        iter_file_sources([make_docs(tmp_path / "docs")], FileLoader()), collection_name="science"
    )
    yield db
    db.close()


@pytest.fixture
def milvus_uri(tmp_path: Path) -> str:
    """A fresh Milvus Lite database path (a directory in milvus-lite 3.x) in a temp dir."""
    return str(tmp_path / "milvus.db")


@pytest.fixture(scope="session")
def milvus_servers():
    """Milvus 2.3.5 and the milvus-lite 2.5.1 TCP engine, each started on first `get(name)`.
    A server that cannot be built or started fails the test with the reason (never a skip)."""
    from deepsearcher.testing.milvus_servers import ServerPool

    pool = ServerPool()
    yield pool
    pool.stop_all()


#: The xdist group of every test that uses a real Milvus server: `make test` runs the suite in two
#: worker processes (`-n 2 --dist loadgroup`), and each worker's `milvus_servers` would start its own
#: Milvus 2.3.5, whose embedded etcd peer port (2380) is fixed. One group runs on one worker, so one
#: 2.3.5 server serves the whole run, as in a run without workers.
MILVUS_SERVER_GROUP = "milvus-servers"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "milvus_servers" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(MILVUS_SERVER_GROUP))
