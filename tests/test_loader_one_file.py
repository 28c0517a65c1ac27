"""Adding a file loader is one file (docs/ARCHITECTURE.md): a `BaseLoader` subclass registered in
its own module is picked by the default FileLoader for its extension, with no list to edit, and
the whole load (chunks, store, search) runs through it. Real Milvus Lite, the real embedding."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import components_for

from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.config import registry as registry_module
from deepsearcher.loader.file_loader import registry
from deepsearcher.loader.file_loader.file_loader import FileLoader

MODULE = textwrap.dedent(
    '''
    from deepsearcher.config.registry import register_provider
    from deepsearcher.loader.file_loader.base import BaseLoader
    from deepsearcher.types import Document


    @register_provider("file_loader")
    class RecipeLoader(BaseLoader):
        """A `.recipe` file: a title line, then the steps, one a line."""

        supported_file_types = ["recipe", "txt"]  # .txt is only a fallback: TextLoader lists it first

        def load_file(self, file_path):
            title, *steps = open(file_path, encoding="utf-8").read().splitlines()
            text = "\\n".join(f"Step {i}: {step}" for i, step in enumerate(steps, 1))
            return [Document(text, metadata={"reference": str(file_path), "title": title})]
    '''
)


@pytest.fixture
def recipe_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The user's module, imported; its registration undone afterwards (the registry is global)."""
    monkeypatch.setitem(registry_module._REGISTERED, "file_loader", list(registry_module._REGISTERED["file_loader"]))
    monkeypatch.setattr(registry, "_providers", dict(registry._providers))
    (tmp_path / "my_recipes.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("my_recipes")
    yield module.RecipeLoader
    sys.modules.pop("my_recipes", None)


def test_a_loader_in_its_own_module_loads_its_files(recipe_loader, tmp_path: Path, embedding, milvus_uri: str) -> None:
    recipe = tmp_path / "docs" / "bread.recipe"
    recipe.parent.mkdir()
    recipe.write_text("Sourdough bread\nFeed the starter\nBake at 230 degrees for forty minutes\n", encoding="utf-8")
    (tmp_path / "docs" / "notes.txt").write_text("Plain notes.", encoding="utf-8")

    loader = FileLoader()
    assert type(loader.loader_for(recipe)) is recipe_loader
    assert type(loader.loader_for(tmp_path / "docs" / "notes.txt")).__name__ == "TextLoader"  # owner wins a fallback
    [document] = loader.load_file(recipe)
    assert document.title == "Sourdough bread" and "Step 2: Bake at 230" in document.page_content

    config = tmp_path / "c.yaml"
    config.write_text(
        "provide_settings:\n  embedding:\n    provider: deepsearcher.testing.hash_embedding:HashEmbedding\n"
        f"    config: {{}}\n  vector_db:\n    provider: Milvus\n    config:\n      uri: '{milvus_uri}'\n",
        encoding="utf-8",
    )
    components = dataclasses.replace(components_for(config, skip={"llm", "web_crawler"}), embedding_model=embedding)
    assert type(components.file_loader.loader_for(recipe)) is recipe_loader  # the configured default loader too
    load(components, LoadRequest(inputs=[str(tmp_path / "docs")], collection="kitchen"))
    vector = embedding.embed_query("At what temperature is the bread baked?")
    hits = components.vector_db.search_data("kitchen", vector, top_k=1)
    assert hits[0].reference == str(recipe) and "Step 2: Bake at 230 degrees" in hits[0].text
