"""Provider resolution: built-in names, entry points, dotted paths, missing extras."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepsearcher.config import Configuration
from deepsearcher.config.optional import require
from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.configuration import ModuleFactory
from deepsearcher.types import ConfigurationError, MissingDependencyError


def test_builtin_provider_by_name() -> None:
    from deepsearcher.embedding import registry
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding
    from deepsearcher.embedding.sentence_transformer_embedding import SentenceTransformerEmbedding

    assert registry.get("MiniLMEmbedding") is MiniLMEmbedding
    assert registry.get("LocalEmbedding") is SentenceTransformerEmbedding  # alias
    assert "SentenceTransformerEmbedding" in registry.names()


def test_package_attribute_resolves_through_the_registry() -> None:
    from deepsearcher.embedding import MiniLMEmbedding  # DeepSearcher-style import, no __init__ edit
    from deepsearcher.embedding.minilm_embedding import MiniLMEmbedding as direct

    assert MiniLMEmbedding is direct
    import deepsearcher.embedding as package

    with pytest.raises(AttributeError):
        package.NoSuchEmbedding  # noqa: B018


def test_unknown_name_lists_allowed_values() -> None:
    from deepsearcher.embedding import registry

    with pytest.raises(ConfigurationError) as info:
        registry.get("NoSuchEmbedding")
    message = str(info.value)
    assert "Unknown embedding provider 'NoSuchEmbedding'" in message
    assert "MiniLMEmbedding" in message and "package.module:Class" in message


def test_dotted_path_provider_is_built_by_the_factory() -> None:
    config = Configuration()
    config.set_provider_config("embedding", "fake_provider_pkg.providers:HashEmbedding", {"salt": "x"})
    embedding = ModuleFactory(config).create_embedding()
    assert type(embedding).__name__ == "HashEmbedding"
    assert embedding.salt == "x"
    assert len(embedding.embed_query("hello")) == 8


def test_bad_dotted_path_is_a_clear_error() -> None:
    from deepsearcher.embedding import registry

    with pytest.raises(ConfigurationError, match="Cannot import embedding provider 'nowhere.module:Thing'"):
        registry.get("nowhere.module:Thing")


def test_entry_point_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[deepsearcher.providers]\nembedding.PluginEmbedding = fake_provider_pkg.providers:PluginEmbedding\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = ProviderRegistry("embedding", ("deepsearcher.embedding",))  # fresh: sees the new entry point
    cls = registry.get("PluginEmbedding")
    assert cls.__name__ == "PluginEmbedding" and cls.model_name == "plugin-8"
    assert "PluginEmbedding" in registry.names() and "MiniLMEmbedding" in registry.names()


def test_wrong_config_keys_name_the_provider() -> None:
    config = Configuration()
    config.set_provider_config("embedding", "fake_provider_pkg.providers:HashEmbedding", {"colour": "red"})
    with pytest.raises(
        ConfigurationError, match=r"provide_settings\.embedding\.config of provider .*unknown option 'colour'"
    ):
        ModuleFactory(config).create_embedding()


def test_missing_optional_dependency_names_the_extra() -> None:
    with pytest.raises(MissingDependencyError) as info:
        require("surely_not_installed_sdk", extra="qdrant", feature="the Qdrant vector store")
    assert "pip install 'deepsearcher[qdrant]'" in str(info.value)
    assert "surely_not_installed_sdk" in str(info.value)
