"""Shared fixtures: the real local embedding model, a real Milvus Lite store in a temp dir, and
real Milvus servers on loopback (started once per session, on first use)."""

from __future__ import annotations

import functools
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


#: `make test` runs the suite in two pytest-xdist workers. Each worker's `milvus_servers` would start
#: its own Milvus 2.3.5, whose embedded etcd peer port (2380) is fixed: so every test of a file that
#: uses the fixture runs on one worker, as one unit, and one 2.3.5 serves the run as in a serial run.
#: (xdist's own `xdist_group` marks do not group under pytest 9.2: xdist 3.8 renames `item._nodeid`,
#: which pytest 9 no longer reads.) Other tests are handed out one by one, as `--dist load` does.
MILVUS_SERVER_GROUP = "milvus-servers"


@functools.cache
def _uses_milvus_servers(test_file: Path) -> bool:
    try:
        return "milvus_servers" in test_file.read_text(encoding="utf-8")
    except OSError:  # not a file of ours (a node id that is no path): never grouped
        return False


@pytest.hookimpl(optionalhook=True)  # xdist's hook; without xdist installed it is never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getoption("dist") not in ("load", "loadgroup"):
        return None  # another --dist mode asked for by name: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class ServerFilesOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return MILVUS_SERVER_GROUP if _uses_milvus_servers(root / nodeid.split("::", 1)[0]) else nodeid

    return ServerFilesOnOneWorker(config, log)
