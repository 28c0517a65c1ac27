"""`load_settings` typed once (config/settings.LoadSettings): every default of a load in one
place, each value checked when the config is read, and a load built from the typed view."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from deepsearcher.agent.web_cache import WebCache
from deepsearcher.config import Configuration
from deepsearcher.config.settings import LoadSettings
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.types.errors import ConfigurationError


def config_with(tmp_path: Path, text: str) -> Configuration:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return Configuration(path)


def test_typed_view_and_defaults_from_one_place(tmp_path: Path) -> None:
    config = config_with(tmp_path, "load_settings:\n  chunk_size: 500\n  max_records: 10\n  watch: [docs]\n")
    load = config.load
    assert (load.chunk_size, load.chunk_overlap, load.batch_size, load.window_size) == (500, 100, 256, 300)
    assert load.budget() == {"max_records": 10} and load.watch == ["docs"]
    assert config.load_settings["chunk_overlap"] == 100, "DeepSearcher's plain key still reads"
    defaults = LoadSettings()
    pipeline = inspect.signature(IngestionPipeline.__init__).parameters
    for key in ("chunk_overlap", "batch_size", "window_size"):  # the pipeline's defaults are the same constants
        assert pipeline[key].default == getattr(defaults, key), key
    cache_overlap = next(f for f in WebCache.__dataclass_fields__.values() if f.name == "chunk_overlap").default
    assert cache_overlap == defaults.chunk_overlap


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("chunk_size: -5", "'load_settings.chunk_size'"),
        ("chunk_overlap: yes", "'load_settings.chunk_overlap'"),
        ("max_records: true", "'load_settings.max_records'"),
        ("text_extensions: ['.']", "'load_settings.text_extensions'"),
        ("watch: ['  ']", "'load_settings.watch'"),
        ("chunk_sise: 10", "Unknown key 'load_settings.chunk_sise'"),
    ],
)
def test_a_bad_value_is_named_when_the_config_is_read(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigurationError, match=named.replace(".", r"\.").replace("(", r"\(")):
        config_with(tmp_path, f"load_settings:\n  {text}\n")
