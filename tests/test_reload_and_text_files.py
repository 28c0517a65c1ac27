"""Issue 18 items 3, 4 and 6 through the real CLI and pipeline (Milvus Lite in a temp dir, the
bundled model): an unchanged re-load parses nothing and says so in words that are true, one
changed file is the only one embedded again, the summary lists what needs the user's eye
(`--all` the rest), files are counted before the load, text files are found by content, and
`--ext` / `text_extensions` / `--text-key` reach the loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import components_for, write_config
from typer.testing import CliRunner

from deepsearcher.app.loading import LoadRequest, file_loader_for, load
from deepsearcher.cli.load_cmd import short_path
from deepsearcher.cli.main import app
from deepsearcher.offline_loading.parse_worker import ThreadParser
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import LoadedSource, iter_file_entries

runner = CliRunner()


@pytest.fixture
def config_file(tmp_path: Path, milvus_uri: str) -> Path:
    return write_config(tmp_path / "config.yaml", milvus_uri)


def corpus(tmp_path: Path, files: int = 12) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for index in range(files):
        (docs / f"note{index:02d}.md").write_text(
            f"# Note {index}\n\n" + f"Note {index} is about topic {index}. " * 60, encoding="utf-8"
        )
    return docs


def cli(*args: str):
    return runner.invoke(app, ["load", *args], env={"COLUMNS": "250"})


class CountingParser(ThreadParser):
    """The real in-thread parser, counting the files it is asked to parse."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.parsed: list[str] = []

    def parse(self, entry: LoadedSource) -> LoadedSource:
        self.parsed.append(Path(entry.reference).name)
        return super().parse(entry)


def test_an_unchanged_reload_parses_nothing_and_one_changed_file_alone_is_embedded(
    tmp_path: Path, config_file: Path, embedding
) -> None:
    docs = corpus(tmp_path)
    components = components_for(config_file, skip=("llm",))
    loader = file_loader_for(components)

    def run(parser: CountingParser):
        pipeline = IngestionPipeline(embedding, components.vector_db, parser=parser)
        return pipeline.run(iter_file_entries([docs], loader), collection_name="kb")

    with components.vector_db:
        first = run(CountingParser(loader))
        again_parser = CountingParser(loader)
        again = run(again_parser)
        (docs / "note03.md").write_text("# Note 3\n\nRewritten: now about okapis.\n", encoding="utf-8")
        changed_parser = CountingParser(loader)
        changed = run(changed_parser)
    assert len(first.loaded) == 12 and first.embeddings_computed > 12
    assert again_parser.parsed == [] and again.embeddings_computed == 0
    assert len(again.skipped_unchanged) == 12 and again.chunks_unchanged == first.chunks_inserted
    assert again.chunks_kept == 0  # nothing was interrupted, so nothing was "kept from an interrupted load"
    assert changed_parser.parsed == ["note03.md"] and changed.embeddings_computed == 1
    assert [Path(item).name for item in changed.replaced] == ["note03.md"]


def test_the_reload_summary_says_what_happened_and_a_new_chunk_size_reloads(tmp_path: Path, config_file: Path) -> None:
    docs = corpus(tmp_path, files=4)
    assert cli(str(docs), "-c", str(config_file)).exit_code == 0
    again = cli(str(docs), "-c", str(config_file))
    assert again.exit_code == 0
    assert "interrupted" not in again.stdout and "chunks already stored (unchanged sources)" in again.stdout
    assert "4 loaded or unchanged source(s) not listed: --all lists every source" in again.stdout
    listed = cli(str(docs), "-c", str(config_file), "--all")
    assert listed.stdout.count("unchanged") >= 4 and "note00.md" in listed.stdout
    resized = cli(str(docs), "-c", str(config_file), "--chunk-size", "400", "--json")
    assert len(json.loads(resized.stdout)["replaced"]) == 4  # the chunking is part of the fingerprint


def test_the_summary_counts_chunks_that_repeat_another_chunks_text(tmp_path: Path, config_file: Path) -> None:
    docs = corpus(tmp_path, files=2)
    for package in ("xmlsec1", "xmlsec1-doc"):  # one README shipped by two packages
        (docs / f"{package}-README.md").write_text("# XMLSec\n\nA C library for XML security.\n", encoding="utf-8")
    human = cli(str(docs), "-c", str(config_file))
    assert human.exit_code == 0
    assert "chunks repeating another's text (vector shared) │ 1" in human.stdout.replace("  ", "")


def test_failures_and_skips_are_listed_and_the_files_are_counted_first(tmp_path: Path, config_file: Path) -> None:
    docs = corpus(tmp_path, files=3)
    (docs / "empty.md").write_text("", encoding="utf-8")
    (docs / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    human = cli(str(docs), "-c", str(config_file))
    assert human.exit_code == 1
    assert "empty.md" in human.stdout and "picture.png" in human.stdout and "note00.md" not in human.stdout

    events: list[tuple[str, dict]] = []
    components = components_for(config_file, skip=("llm",))
    with components.vector_db:
        load(components, LoadRequest(inputs=[str(docs)]), on_progress=lambda event, info: events.append((event, info)))
    assert events[0] == ("counted", {"files": 5, "more": False})


def test_a_long_path_keeps_its_name_and_nearest_folders_in_the_progress_line() -> None:
    path = "/home/someone/projects/a-very-long-project-name/documentation/chapters/introduction-to-okapis.md"
    shortened = short_path(path, 48)
    assert shortened.endswith("chapters/introduction-to-okapis.md") and shortened.startswith("…/")
    assert len(shortened) <= 48
    assert short_path("/tmp/two\nlines.txt") == "/tmp/two\\nlines.txt"


def test_text_files_are_found_by_content_and_extensions_can_be_added(
    tmp_path: Path, milvus_uri: str, config_file: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README").write_text("This project studies okapis.\n", encoding="utf-8")
    (docs / "copyright").write_text("Copyright 2024 The Okapi Society. Licensed under the MIT license.\n")
    (docs / "tool.py").write_text("def okapi():\n    return 'striped legs'\n", encoding="utf-8")
    (docs / "blob").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00binary")
    (docs / "notes.xyz").write_text("Okapi notes in an odd extension.\n", encoding="utf-8")

    first = json.loads(cli(str(docs), "-c", str(config_file), "--json").stdout)
    outcomes = {Path(item["source"]).name: item["outcome"] for item in first["sources"]}
    assert outcomes == {
        "README": "loaded",
        "copyright": "loaded",
        "tool.py": "loaded",
        "blob": "skipped",
        "notes.xyz": "skipped",
    }
    added = json.loads(cli(str(docs), "-c", str(config_file), "--ext", ".xyz", "--json").stdout)
    assert {Path(item): True for item in added["loaded"]} == {docs / "notes.xyz": True}

    configured = write_config(tmp_path / "with-ext.yaml", milvus_uri, "load_settings:\n  text_extensions: [xyz]\n")
    components = components_for(configured, skip=("llm",))
    assert file_loader_for(components).can_load(docs / "notes.xyz")
    assert not file_loader_for(components_for(config_file, skip=("llm",))).can_load(docs / "notes.xyz")


def test_json_without_the_text_key_is_skipped_in_a_folder_and_text_key_loads_it(
    tmp_path: Path, config_file: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    records = [{"title": f"Okapi {index}", "body": f"Okapi {index} eats leaves."} for index in range(3)]
    (docs / "corpus.json").write_text(json.dumps(records), encoding="utf-8")
    (docs / "corpus.jsonl").write_text("\n".join(json.dumps(item) for item in records), encoding="utf-8")

    plain = cli(str(docs), "-c", str(config_file), "--json")
    summary = json.loads(plain.stdout)
    assert plain.exit_code == 1  # nothing loaded: the warning says so
    for item in summary["sources"]:
        assert item["outcome"] == "skipped" and "--text-key FIELD" in item["reason"], item
    named = json.loads(cli(str(docs / "corpus.json"), "-c", str(config_file), "--json").stdout)
    assert named["sources"][0]["outcome"] == "failed"  # named by the user: a failure, with what to do
    assert "has no 'text' key (its keys: title, body)" in named["sources"][0]["reason"]

    keyed = cli(str(docs), "-c", str(config_file), "--text-key", "body", "--json")
    assert keyed.exit_code == 0 and len(json.loads(keyed.stdout)["loaded"]) == 2
