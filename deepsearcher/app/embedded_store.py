"""The embedded default store where Milvus Lite cannot run (Windows: it has no wheel there).

Milvus with a local file (the default) needs the `milvus_lite` package. Where it cannot be
imported, Qdrant's local mode (a folder beside where milvus.db would be) takes its place,
chosen here with one log line, so `pip install deepsearcher` works and loads on every platform.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def _embedded_milvus_file(config: dict[str, Any]) -> str | None:
    """The local file a Milvus config points at (None when it names a server)."""
    from deepsearcher.vector_db._milvus_lite import default_lite_path, is_server_uri

    uri = config.get("uri")
    if uri and is_server_uri(str(uri)):
        return None
    return str(uri) if uri else default_lite_path()


def milvus_lite_importable() -> bool:
    """Whether Milvus Lite is installed here. Found, not imported: importing it (numpy, faiss, its
    engine) costs half a second that an empty store's `collections list` need not pay."""
    try:
        return importlib.util.find_spec("milvus_lite") is not None
    except ImportError:
        return False


def fallback_store(provider: str, config: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """("Qdrant", its config) when `provider` is an embedded Milvus and milvus_lite is missing."""
    if provider != "Milvus" or milvus_lite_importable():
        return None
    milvus_file = _embedded_milvus_file(config)
    if milvus_file is None:
        return None
    folder = Path(milvus_file).with_suffix("").with_name(Path(milvus_file).stem + "_qdrant")
    qdrant: dict[str, Any] = {"path": str(folder)}
    if config.get("default_collection"):
        qdrant["default_collection"] = config["default_collection"]
    logger.warning(
        "Milvus Lite is not installed on this platform: using the embedded Qdrant store in %s instead.", folder
    )
    return "Qdrant", qdrant
