"""A collection stays true to its folders (issue #33), through the real CLI on Milvus Lite:
a deleted file is named, and removed with --sync; a renamed file keeps its stored vectors;
a load that stores nothing leaves no collection behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import components_for, write_config
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.testing.crash_points import CRASH_ENV
from deepsearcher.vector_db.milvus import Milvus

runner = CliRunner()

TEXTS = {
    "a.md": "# Alpha\n\nThe brass orrery in the north tower turns once a year.\n",
    "b.md": "# Bravo\n\nA quartz lantern lights the cellar stairs at night.\n",
    "c.md": "# Charlie\n\nThe ferry to the island leaves at dawn from pier nine.\n",
}


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    return write_config(tmp_path / "config.yaml", milvus_uri)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def load(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["load", *args, "--json"], env={"COLUMNS": "250"})
    return result.exit_code, json.loads(result.stdout)


def stored(config_file: Path, collection: str = "deepsearcher") -> dict[str, tuple[str, int]]:
    """reference -> (source hash, chunk count), as the store lists them."""
    with components_for(config_file, skip=("llm",)).vector_db as store:
        return {ref: (rec.source_hash, rec.chunk_count) for ref, rec in store.list_sources(collection).items()}


def test_a_deleted_file_is_named_then_removed_with_sync(docs: Path, config_file: Path) -> None:
    assert load(str(docs), "-c", str(config_file))[0] == 0
    gone = docs / "b.md"
    gone.unlink()

    code, summary = load(str(docs), "-c", str(config_file))
    assert code == 0
    assert summary["gone"] == [str(gone)] and summary["removed_gone"] is False
    assert str(gone) in stored(config_file)  # named, not removed

    human = runner.invoke(app, ["load", str(docs), "-c", str(config_file)], env={"COLUMNS": "250"})
    assert "no longer exist" in human.stderr and "--sync removes them" in human.stderr

    code, summary = load(str(docs), "-c", str(config_file), "--sync")
    assert code == 0 and summary["removed_gone"] is True and summary["gone"] == [str(gone)]
    after_sync = stored(config_file)

    # The rows equal a clean load of what remains.
    assert load(str(docs), "-c", str(config_file), "--collection", "clean")[0] == 0
    assert after_sync == stored(config_file, "clean")
    assert sorted(Path(ref).name for ref in after_sync) == ["a.md", "c.md"]

    code, summary = load(str(docs), "-c", str(config_file), "--sync")
    assert summary["gone"] == [] and summary["embeddings_computed"] == 0


def test_a_renamed_file_keeps_its_vectors(docs: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load(str(docs), "-c", str(config_file))[0] == 0
    before = stored(config_file)
    old, new = docs / "b.md", docs / "sub" / "lantern.md"
    new.parent.mkdir()
    old.rename(new)

    listings: list[str] = []  # a spy: list_sources reads every row, so a load --sync lists once
    real_listing = Milvus.list_sources
    monkeypatch.setattr(Milvus, "list_sources", lambda self, c: listings.append(c) or real_listing(self, c))
    code, summary = load(str(docs), "-c", str(config_file), "--sync")
    monkeypatch.undo()
    assert listings == ["deepsearcher"]
    assert code == 0
    assert summary["renamed"] == [[str(old), str(new)]]
    assert summary["embeddings_computed"] == 0  # nothing embedded again (the listing handed over knows the copy)
    after = stored(config_file)
    assert str(old) not in after and after[str(new)] == before[str(old)]

    components = components_for(config_file, skip=("llm",))
    with components.vector_db as store:
        query = components.embedding_model.embed_query("quartz lantern")
        hits = store.search_data("deepsearcher", query, top_k=1, query_text="quartz lantern")
    assert hits[0].reference == str(new) and "quartz lantern" in hits[0].text


def test_a_load_that_stores_nothing_creates_no_collection(tmp_path: Path, config_file: Path) -> None:
    result = runner.invoke(app, ["load", str(tmp_path / "missing.pdf"), "-c", str(config_file), "--collection", "x"])
    assert result.exit_code == 1
    assert "Loaded into" not in result.stdout and "Nothing was stored" in result.stdout
    listing = runner.invoke(app, ["collections", "list", "-c", str(config_file), "--json"])
    assert "'x'" not in listing.stdout and '"x"' not in listing.stdout


@pytest.mark.parametrize("server", ["milvus-2.3.5", "milvus-lite-2.5.1-tcp"])
def test_sync_and_rename_on_the_milvus_servers(server: str, milvus_servers, docs: Path, tmp_path: Path) -> None:
    """The same delete / rename / --sync on the real servers the suite starts (dense only on 2.3.5)."""
    config_file = write_config(tmp_path / "server.yaml", milvus_servers.get(server).uri)
    name = "sync_" + server.replace("-", "_").replace(".", "_")
    assert load(str(docs), "-c", str(config_file), "--collection", name, "--force-new-collection")[0] == 0
    before = stored(config_file, name)
    (docs / "a.md").unlink()
    (docs / "b.md").rename(docs / "lantern.md")

    code, summary = load(str(docs), "-c", str(config_file), "--collection", name, "--sync")
    assert code == 0 and summary["embeddings_computed"] == 0
    assert summary["renamed"] == [[str(docs / "b.md"), str(docs / "lantern.md")]]
    assert summary["gone"] == [str(docs / "a.md"), str(docs / "b.md")] and summary["removed_gone"]
    after = stored(config_file, name)
    assert after == {
        str(docs / "c.md"): before[str(docs / "c.md")],
        str(docs / "lantern.md"): before[str(docs / "b.md")],
    }
    with components_for(config_file, skip=("llm",)).vector_db as store:
        store.clear_db(name)


def test_a_sync_killed_mid_way_loses_nothing_on_rerun(docs: Path, config_file: Path) -> None:
    """SIGKILL (the crash hook, installed in each load process) right after the first new batch is stored, in a load
    --sync that also renames and deletes: the re-run ends where a clean load of the folder does.
    Every load runs in its own process (this test's process never opens the database until the end)."""
    import os
    import subprocess
    import sys

    def run(*args: str, crash: str = "") -> subprocess.CompletedProcess:
        code = (
            "import sys; from deepsearcher.testing import crash_points; crash_points.install(); "
            "from deepsearcher.cli.main import run; sys.argv[0] = 'deepsearcher'; run()"
        )
        env = {**os.environ, CRASH_ENV: crash}
        command = [sys.executable, "-c", code, "load", str(docs), "-c", str(config_file), "--json", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    assert run().returncode == 0
    (docs / "a.md").unlink()
    (docs / "b.md").rename(docs / "lantern.md")
    for index in range(3):
        (docs / f"new{index}.md").write_text(f"# New {index}\n\nA new note, number {index}, about tides.\n")
    assert run("--sync", "--batch-size", "1", crash="inserted:1").returncode == -9

    rerun = run("--sync")
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["gone"] == [str(docs / "a.md"), str(docs / "b.md")]
    assert run("--collection", "clean").returncode == 0
    assert stored(config_file) == stored(config_file, "clean")
