"""The built-in provider table (config/builtin_providers.py) is data that cannot rot: it names
exactly the `@register_provider` classes that exist, and a lookup imports only the module it
names; a third-party provider comes from its entry point, without importing every built-in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deepsearcher.agent.catalog import registry as agent_registry
from deepsearcher.app.components import registries
from deepsearcher.config import registry as registry_module
from deepsearcher.config.builtin_providers import BUILTIN_PROVIDERS

TESTS = Path(__file__).resolve().parent


def test_the_table_names_every_registered_built_in_and_nothing_else() -> None:
    every = {**registries(), "agent": agent_registry}
    assert set(BUILTIN_PROVIDERS) == set(every)
    for feature, registry in every.items():
        registry.names()  # every module of the feature's package imported: each decorator has run
        expected: dict[str, str] = {}
        for name, cls, info in registry_module._REGISTERED[feature]:
            if not cls.__module__.startswith(registry.packages):
                continue  # a class a test registered from its own module
            for key in (name, *info["aliases"]):
                expected[key] = f"{cls.__module__}:{cls.__qualname__}"
        table = dict(BUILTIN_PROVIDERS[feature])
        missing = {key: path for key, path in expected.items() if table.get(key) != path}
        stale = sorted(set(table) - set(expected))
        assert not missing and not stale, f"config/builtin_providers.py[{feature!r}]: add {missing}, remove {stale}"
        for key, path in table.items():
            assert registry.get(key) is registry_module._import_dotted(path, feature), key


PROBE = """
import json, sys
from deepsearcher.embedding import registry as embeddings
from deepsearcher.llm import registry as llms
before = set(sys.modules)
plugin = embeddings.get("PluginEmbedding")
after_plugin = set(sys.modules)
openai = llms.get("OpenAI")
def ours(names, package):
    return sorted(n for n in names if n.startswith(package + ".") and not n.rpartition(".")[2].startswith("_"))
print(json.dumps({
    "plugin": [plugin.__module__, plugin.__name__],
    "embedding_modules_for_plugin": ours(after_plugin - before, "deepsearcher.embedding"),
    "openai": f"{openai.__module__}:{openai.__name__}",
    "llm_modules": ours(set(sys.modules), "deepsearcher.llm"),
}))
"""


def test_a_lookup_imports_one_module_and_a_plugin_comes_from_its_entry_point(tmp_path: Path) -> None:
    dist = tmp_path / "fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[deepsearcher.providers]\nembedding.PluginEmbedding = fake_provider_pkg.providers:PluginEmbedding\n"
    )
    root = TESTS.parent
    env = {"PYTHONPATH": f"{tmp_path}:{TESTS}:{root}", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["plugin"] == ["fake_provider_pkg.providers", "PluginEmbedding"]
    assert seen["embedding_modules_for_plugin"] == []  # found by its entry point: no built-in imported for it
    assert seen["openai"] == "deepsearcher.llm.openai_llm:OpenAI"
    # the provider modules of the llm package that were imported: only the one the table names
    assert [name for name in seen["llm_modules"] if name.endswith(("_llm", "_presets"))] == [
        "deepsearcher.llm.openai_llm"
    ]
