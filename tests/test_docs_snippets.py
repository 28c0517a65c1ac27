"""The documentation's commands work as written: the shell and Python blocks of getting-started and
the guides run, in page order, each page in a fresh folder with a fresh store and no API key.

A block is marked in the Markdown just above its fence (an HTML comment, invisible on the site):
`<!-- snippet: run -->` (optionally `expect="TEXT"`, which its output must contain) or
`<!-- not run: REASON -->` for a block that needs a key, starts a long-running server or downloads
something. On the pages listed in MARKED_PAGES every shell and Python block must carry one of the
two, so a new snippet cannot go untested unnoticed; other guides run the blocks they mark `run`.
The getting-started answer runs the real local model (installed by `make local-llm`, as for
tests/test_real_llm.py), so the page's "cited answer with no key" is what a reader gets.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Pages whose every shell/Python block must say whether it runs (the getting-started page and the guides
#: written with the site); guides added later run the blocks they mark.
MARKED_PAGES = (
    "getting-started.md",
    "guides/your-documents.md",
    "guides/local-model.md",
    "guides/api-model.md",
    "guides/server.md",
    "guides/mcp.md",
    "guides/milvus-server.md",
    "guides/evaluation.md",
)
PAGES = sorted({*MARKED_PAGES, *(str(path.relative_to(DOCS)) for path in (DOCS / "guides").glob("*.md"))})
RUNNABLE = ("bash", "sh", "shell", "console", "python", "py")
_BLOCK = re.compile(
    r"(?:^<!--\s*(?P<marker>[^>]*?)\s*-->\s*\n)?^```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```\s*$",
    re.MULTILINE | re.DOTALL,
)
_RUN = re.compile(r'^snippet:\s*run(?:\s+expect="(?P<expect>[^"]*)")?$')
_NOT_RUN = re.compile(r"^not run:\s*\S")


@dataclass(frozen=True)
class Snippet:
    page: str
    line: int
    lang: str
    code: str
    marker: str | None

    @property
    def runs(self) -> bool:
        return self.marker is not None and _RUN.match(self.marker) is not None

    @property
    def expect(self) -> str | None:
        match = _RUN.match(self.marker or "")
        return match.group("expect") if match else None

    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


def snippets(page: str) -> list[Snippet]:
    """The shell and Python blocks of `page`, with the marker above each (None when it has none)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        lang = match.group("lang").lower()
        if lang in RUNNABLE:
            line = text.count("\n", 0, match.start("lang")) + 1
            found.append(Snippet(page, line, lang, match.group("code"), match.group("marker")))
    return found


def fresh_environment(workdir: Path) -> dict[str, str]:
    """This checkout's `deepsearcher` first on PATH, the store and log in `workdir`, no key, no config."""
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    env.pop("DEEPSEARCHER_CONFIG", None)
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}".rstrip(os.pathsep),
        HF_HUB_OFFLINE="1",
        XDG_DATA_HOME=str(workdir / "data"),  # the default store: milvus.db in the user data folder
        DEEPSEARCHER_LOG_FILE=str(workdir / "deepsearcher.log"),
        NO_COLOR="1",
        COLUMNS="200",  # a wide terminal: rich does not wrap a path in the middle of an expected name
    )
    return env


def run_snippet(snippet: Snippet, workdir: Path, env: dict[str, str]) -> str:
    if snippet.lang.startswith("py"):
        command = [sys.executable, "-c", snippet.code]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", snippet.code]
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, (
        f"{snippet.where()} exited {done.returncode}:\n{snippet.code}\n--- output ---\n{output}"
    )
    if snippet.expect is not None:
        assert snippet.expect in output, f"{snippet.where()} did not print {snippet.expect!r}:\n{output}"
    return output


def test_every_snippet_of_the_written_pages_says_whether_it_runs() -> None:
    unmarked = [s.where() for page in MARKED_PAGES for s in snippets(page) if s.marker is None]
    assert unmarked == [], f"mark these blocks <!-- snippet: run --> or <!-- not run: REASON -->: {unmarked}"
    wrong = [
        s.where()
        for page in MARKED_PAGES
        for s in snippets(page)
        if s.marker is not None and not (_RUN.match(s.marker) or _NOT_RUN.match(s.marker))
    ]
    assert wrong == [], f"markers that are neither 'snippet: run' nor 'not run: REASON': {wrong}"
    assert sum(s.runs for page in MARKED_PAGES for s in snippets(page)) >= 8  # the pages do run things


@pytest.mark.parametrize("page", [page for page in PAGES if any(s.runs for s in snippets(page))])
def test_the_page_runs_as_written(page: str, tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # the pages load the sample documents
    env = fresh_environment(tmp_path)
    for snippet in snippets(page):
        if snippet.runs:
            run_snippet(snippet, tmp_path, env)


def test_the_reference_pages_cover_every_command_provider_key_and_route() -> None:
    """The generated pages (docs/hooks/reference.py, run by `make docs`) leave nothing of the code out."""
    import importlib.util

    import typer

    from deepsearcher.app.components import registries
    from deepsearcher.cli.main import app
    from deepsearcher.config.settings import LOAD_KEYS
    from deepsearcher.server.app import create_app
    from deepsearcher.server.settings import SERVER_KEYS

    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    pages = reference.render_all()

    cli = pages["reference/cli.md"]
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        for sub, leaf in getattr(command, "commands", {name: command}).items():
            heading = f"## {name} {sub}" if sub != name else f"## {name}"
            assert heading + "\n" in cli, heading
            for param in leaf.params:
                assert f"`{param.opts[0]}`" in cli or f"`{param.name.upper()}`" in cli, (heading, param.opts)
    providers = pages["reference/providers.md"]
    for feature, registry in registries().items():
        for info in registry.infos():
            if info.source == "built-in":
                assert f"### {info.name} " in providers, (feature, info.name)
                if info.env_var:
                    assert f"`{info.env_var}`" in providers
    config = pages["reference/configuration.md"]
    for key in (*LOAD_KEYS, *SERVER_KEYS, "max_iter", "top_k", "agent", "relevance_floor"):
        assert f"| `{key}` |" in config, key
    assert "| `max_parse_seconds` | float | `60.0` | > 0 |" in config
    rest = pages["reference/rest-api.md"]
    for path, methods in create_app().openapi()["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}`" in rest
