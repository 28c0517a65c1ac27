"""Without milvus_lite (Windows has no wheel), the default embedded store is Qdrant's local
mode, chosen with one log line. Tested on Linux by hiding milvus_lite in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent(
    """
    import logging, sys
    class HideMilvusLite:
        def find_spec(self, name, path=None, target=None):
            if name == "milvus_lite" or name.startswith("milvus_lite."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None
    sys.meta_path.insert(0, HideMilvusLite())
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    import yaml
    from deepsearcher.app.components import create_provider
    from deepsearcher.config import Configuration
    from deepsearcher.types import Chunk
    config_path = sys.argv[1]
    store = create_provider(Configuration(config_path), "vector_db")
    print("STORE", type(store).__name__)
    store.init_collection(3, "notes", description="n", embedding_model="toy")
    store.insert_data("notes", [Chunk(text="hello", reference="a.txt", embedding=[1.0, 0.0, 0.0])])
    print("HIT", store.search_data("notes", [1.0, 0.0, 0.0], top_k=1)[0].text)
    store.close()
    """
)


def test_without_milvus_lite_the_embedded_default_is_qdrant_local(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    uri = tmp_path / "milvus.db"
    config.write_text(f'provide_settings:\n  vector_db:\n    provider: "Milvus"\n    config:\n      uri: "{uri}"\n')
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "STORE Qdrant" in done.stdout and "HIT hello" in done.stdout
    notices = [line for line in done.stderr.splitlines() if "Milvus Lite is not installed" in line]
    assert len(notices) == 1 and str(tmp_path / "milvus_qdrant") in notices[0]
    assert (tmp_path / "milvus_qdrant").is_dir() and not uri.exists()


def test_pyproject_marks_milvus_lite_and_qdrant_by_platform() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()  # tomllib is 3.11+, the package supports 3.10
    assert "\"milvus-lite>=2.5.0; sys_platform != 'win32'\"," in pyproject
    assert "\"qdrant-client>=1.12; sys_platform == 'win32'\"," in pyproject
