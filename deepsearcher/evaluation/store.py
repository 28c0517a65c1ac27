"""Where an evaluation keeps its corpus: a store of its own, next to the user's, never inside it.

An eval collection in the user's own store would show in `collections list`, on the web page
and among the CollectionRouter's choices, and its passages could answer the user's questions.
So `deepsearcher eval` loads the corpus into a Milvus Lite file of its own, with the same
retrieval settings (hybrid, analyzer, ranker, weights) as the configured store, so the figures
stay those of the user's setup; `--store configured` asks for the configured store itself
(a Milvus server under test, say).
"""

from __future__ import annotations

import copy
from pathlib import Path

from deepsearcher.config import Configuration

__all__ = ["EVAL_STORE_NAME", "eval_configuration"]

EVAL_STORE_NAME = "eval.db"
#: Settings that say where a store is or who may use it: the eval store has its own.
_LOCATION_KEYS = ("uri", "token", "user", "password", "db", "url", "host", "port", "api_key", "path", "location")


def _data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("deepsearcher"))


def eval_store_path(config: Configuration) -> Path:
    """Beside a local Milvus Lite file (`milvus.db` → `milvus-eval.db`), else in the user data folder."""
    setting = config.get_provider_config("vector_db")
    uri = (setting.get("config") or {}).get("uri")
    if setting.get("provider") == "Milvus" and uri and "://" not in str(uri):
        local = Path(str(uri)).expanduser()
        return local.with_name(f"{local.stem}-eval.db")
    own = _data_dir()
    own.mkdir(parents=True, exist_ok=True)  # our own folder, made as the default store's is (not a user's typo)
    return own / EVAL_STORE_NAME


def eval_configuration(config: Configuration) -> Configuration:
    """`config` with its vector store replaced by the evaluation's own Milvus Lite file."""
    evaluated = copy.deepcopy(config)
    setting = config.get_provider_config("vector_db")
    options = dict(setting.get("config") or {}) if setting.get("provider") == "Milvus" else {}
    options = {key: value for key, value in options.items() if key not in _LOCATION_KEYS}
    options["uri"] = str(eval_store_path(config))
    evaluated.set_provider_config("vector_db", "Milvus", options)
    return evaluated
