"""The import graph of `deepsearcher`: no cycles, and no import that points up a layer.

Layers, top to bottom (an import may point down or stay in its layer, never up):
DeepSearcher's module-level API (compat, and its old names configuration and online_query)
→ front-ends (cli, server, mcp_server, testing) → services (app, evaluation, offline_loading's
pipeline) → agent → providers (llm, embedding, vector_db, loader) → transport (retry policy,
HTTP, AWS and watsonx clients) → types, config, utils. Nothing below the compatibility layer
imports it, nor reads components from a module global: they are passed in. The
providers are siblings that never import one another: what two of them share lives in
transport. Every import counts, also those inside functions and under
TYPE_CHECKING: a lazy import hides a dependency from the interpreter, not from the design.
The one exception is a module-level `__getattr__`: it keeps an old import path of a moved
name working (a compatibility alias), it is not something the module uses.
"""

from __future__ import annotations

import ast
from pathlib import Path

import deepsearcher

PACKAGE_DIR = Path(deepsearcher.__file__).parent
LAYERS = {
    "types": 0,
    "config": 0,
    "utils": 0,
    "transport": 1,
    "graph": 1,  # entity links between chunks: pure functions over types, used by stores and agents
    "llm": 2,
    "embedding": 2,
    "vector_db": 2,
    "loader": 2,
    "web_search": 2,
    "agent": 3,
    "offline_loading": 4,
    "evaluation": 4,
    "app": 4,
    "cli": 5,
    "server": 5,
    "mcp_server": 5,
    "mcp_wire": 5,
    "testing": 5,
    "compat": 6,
    "tools": 6,  # DeepSearcher's oldest path of utils.log, an alias at the edge
    "configuration": 6,
    "online_query": 6,
}
#: DeepSearcher's module-level API and its old import paths: only they may import one another.
COMPAT = ("deepsearcher.compat", "deepsearcher.configuration", "deepsearcher.online_query")
PROVIDERS = ("llm", "embedding", "vector_db", "loader", "web_search")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The deepsearcher modules the file at `path` imports, anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    aliases = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"]
    for alias in aliases:
        tree.body.remove(alias)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "deepsearcher" or name.startswith("deepsearcher.")}


def graph() -> dict[str, set[str]]:
    """Module → the deepsearcher modules it imports (a package's own submodules left out)."""
    files = {module_name(path): path for path in PACKAGE_DIR.rglob("*.py")}
    edges = {}
    for name, path in files.items():
        targets = {target for target in imports(path) if target in files and target != name}
        # a package's __init__ re-exporting its submodules (and they importing siblings through it) is how
        # packages work; counting it would make every package a cycle of one
        edges[name] = {t for t in targets if not t.startswith(name + ".") and not name.startswith(t + ".")}
    return edges


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := walk(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := walk(node)):
            return cycle
    return None


def test_every_package_has_a_layer() -> None:
    assert {name for name in graph() if name != "deepsearcher" and layer(name) is None} == set()


def test_no_import_cycles() -> None:
    edges = graph()
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_no_import_points_up_a_layer() -> None:
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if target != "deepsearcher" and (layer(name) or 0) < (layer(target) or 0)
    )
    assert upward == []


def package(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_providers_never_import_one_another() -> None:
    across = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if package(name) in PROVIDERS and package(target) in PROVIDERS and package(name) != package(target)
    )
    assert across == []


def test_the_checker_sees_a_cycle_and_an_upward_import() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert layer("deepsearcher.transport.retry") < layer("deepsearcher.llm.base") < layer("deepsearcher.agent.base")
    assert layer("deepsearcher.agent.base") < layer("deepsearcher.cli.main")
    edges = graph()  # lazy imports are seen too
    assert "deepsearcher.llm.errors" in edges["deepsearcher.agent.rag_router"]
    assert "deepsearcher.server.routes_v1" in edges["deepsearcher.server.app"]


def is_compat(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in COMPAT)


def test_nothing_inside_imports_the_compatibility_layer() -> None:
    """The CLI, server, MCP, services and agents take a `Components`; none reaches for
    DeepSearcher's process-wide one (`deepsearcher.configuration` and friends)."""
    inside = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if is_compat(target) and not is_compat(name)
    )
    assert inside == []


def test_offline_loading_reaches_the_compat_api_only_lazily() -> None:
    """`deepsearcher.offline_loading` keeps DeepSearcher's names through a module `__getattr__`,
    so importing the pipeline (`deepsearcher.offline_loading.pipeline`) never loads the compat layer."""
    import deepsearcher.offline_loading as package
    from deepsearcher.compat import offline_loading

    path = PACKAGE_DIR / "offline_loading" / "__init__.py"
    assert not {target for target in imports(path) if is_compat(target)}  # the __getattr__ alone reaches it
    assert package.load_from_local_files is offline_loading.load_from_local_files


#: What a module-level cache of components would be called (the compat layer's own names among them).
COMPONENT_NAMES = {
    "llm",
    "embedding_model",
    "vector_db",
    "file_loader",
    "web_crawler",
    "default_searcher",
    "naive_rag",
    "components",
    "current",
    "built",
    "builder",
    "cached_retriever",
    "retriever",
}


def test_no_module_keeps_components_in_a_global() -> None:
    """Outside the compat layer no module assigns a Components (or a builder) at module level."""
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        name = module_name(path)
        if is_compat(name):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            value = getattr(node, "value", None)
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(value, ast.Call):
                called = ast.unparse(value.func)
                if called.endswith(("ComponentBuilder", "build_components", "Components")):
                    offenders.append(f"{name}: {ast.unparse(node)}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                offenders.extend(f"{name}: global {held}" for held in node.names if held.strip("_") in COMPONENT_NAMES)
    assert offenders == []
