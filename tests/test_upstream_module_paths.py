"""Every module path of upstream DeepSearcher's package imports here and exposes the same public
names (tests/compat_data/upstream_modules.json, read from upstream's tree), as thin aliases of
our classes; `deepsearcher.tools.log` keeps the oldest module's `critical`."""

from __future__ import annotations

import importlib
import json
import logging
from pathlib import Path

import pytest

import deepsearcher.llm
from deepsearcher.llm import registry as llm_registry

UPSTREAM = json.loads((Path(__file__).parent / "compat_data" / "upstream_modules.json").read_text())["modules"]

#: The paths that did not import before (issue #34); the data must keep listing them.
ONCE_MISSING = [
    f"deepsearcher.llm.{name}"
    for name in (
        "deepseek",
        "xai",
        "siliconflow",
        "ppio",
        "together_ai",
        "glm",
        "volcengine",
        "novita",
        "aliyun",
        "jiekouai",
        "minimax",
        "atlascloud",
        "azure_openai",
        "gemini",
        "ollama",
    )
] + ["deepsearcher.embedding.fastembed_embdding", "deepsearcher.vector_db.oracle"]


def imported(module: str, name: str) -> object:
    """What `from module import name` gives (a submodule counts, as in Python)."""
    namespace: dict[str, object] = {}
    exec(f"from {module} import {name}", namespace)  # noqa: S102 - the import statement a user writes
    return namespace[name]


def test_every_upstream_module_path_imports_with_its_public_names() -> None:
    assert set(ONCE_MISSING) <= set(UPSTREAM) and len(UPSTREAM) >= 80
    problems = []
    for module, names in sorted(UPSTREAM.items()):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            problems.append(f"{module}: {exc}")
            continue
        problems += [f"{module}.{name} missing" for name in names if not _importable(module, name)]
    assert problems == []


def _importable(module: str, name: str) -> bool:
    try:
        imported(module, name)
    except ImportError:
        return False
    return True


def test_an_upstream_module_is_an_alias_of_our_class_not_a_copy() -> None:
    for module, names in UPSTREAM.items():
        package = module.rpartition(".")[0]
        if package not in ("deepsearcher.llm", "deepsearcher.embedding", "deepsearcher.vector_db"):
            continue
        for name in set(names) & set(UPSTREAM.get(package, ())):
            assert imported(module, name) is imported(package, name), f"{module}.{name}"
    deepseek = importlib.import_module("deepsearcher.llm.deepseek").DeepSeek
    assert deepseek is llm_registry.get("DeepSeek") is deepsearcher.llm.DeepSeek
    assert deepseek.default_base_url == "https://api.deepseek.com"


@pytest.fixture
def dev_lines():
    from deepsearcher.utils import log as utils_log

    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(f"{record.levelname} {record.getMessage()}")  # type: ignore[method-assign]
    utils_log.dev_logger.addHandler(handler)
    yield lines
    utils_log.dev_logger.removeHandler(handler)
    utils_log.set_dev_mode(False)


def test_tools_log_critical_logs_in_dev_mode_and_never_raises(dev_lines) -> None:
    from deepsearcher.tools import log
    from deepsearcher.utils import log as utils_log

    assert log.__name__ == "deepsearcher.tools.log"
    log.critical("quiet")  # not in dev mode: dropped, as in the oldest module
    log.set_dev_mode(True)
    assert log.dev_mode is True and utils_log.dev_mode is True  # one flag for both paths
    log.critical("loud")
    assert dev_lines == ["CRITICAL loud"]
    with pytest.raises(RuntimeError, match="still raises"):
        utils_log.critical("still raises")  # the newer path keeps upstream's later behaviour


def test_upstream_shims_are_attached_in_one_place_and_never_imported_by_the_core() -> None:
    from test_architecture import PACKAGE_DIR, imports, module_name

    shims = {
        "deepsearcher.vector_db._upstream": {"deepsearcher.vector_db"},
        "deepsearcher.llm._upstream": {"deepsearcher.llm"},
        "deepsearcher.agent._upstream": {"deepsearcher.agent"},
    }
    for path in PACKAGE_DIR.rglob("*.py"):
        importer = module_name(path)
        for shim, allowed in shims.items():
            if shim in imports(path):
                assert importer in allowed, f"{importer} imports {shim}"
    from deepsearcher.vector_db._upstream import UpstreamStoreShape
    from deepsearcher.vector_db.base import _SHAPES

    assert [type(shape) for shape in _SHAPES] == [UpstreamStoreShape]  # attached once
    import deepsearcher.agent  # noqa: F401 - the attach points
    import deepsearcher.llm  # noqa: F401
    from deepsearcher.agent._upstream import UpstreamAgentShape
    from deepsearcher.llm._upstream import UpstreamLLMShape
    from deepsearcher.utils.contracts import attached_shapes

    assert [type(shape) for shape in attached_shapes("llm")] == [UpstreamLLMShape]
    assert [type(shape) for shape in attached_shapes("agent")] == [UpstreamAgentShape]
    for base in (PACKAGE_DIR / "llm" / "base.py", PACKAGE_DIR / "agent" / "base.py"):  # one contract each
        source = base.read_text(encoding="utf-8")
        assert "_IN_OWN_CHAT" not in source and "def __new__" not in source and "_is_own" not in source, base
