"""The entity graph beyond one step, on real Milvus Lite: the walk reaches the third hop, damps
hub names, and `deepsearcher graph rebuild` gives a collection loaded without the graph the same
results as a load with it, without re-embedding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_config
from typer.testing import CliRunner

from deepsearcher.cli.main import app
from deepsearcher.graph import SpreadSettings, normalise, spread, title_key
from deepsearcher.types import Chunk, RetrievalResult
from deepsearcher.types.errors import ConfigurationError
from deepsearcher.vector_db.milvus import TITLE_KEY, Milvus

QUESTION = "What river runs through the birthplace of the director of Harbour Lights?"
PASSAGES = {
    "Harbour Lights": "Harbour Lights is a 1963 British drama film about a lighthouse keeper, directed by Ada Korven.",
    "Ada Korven": "Ada Korven was a Norwegian film director and screenwriter, born in Lillevik in 1921.",
    "Lillevik (Norway)": "Lillevik is a small town in western Norway; the river Vossa flows through its centre.",
    "Lighthouse keepers": "A lighthouse keeper tended the light of a lighthouse; the job ended with automation.",
    "British drama films": "Many British drama films of the 1960s were shot in harbour towns on the coast.",
    "Rivers of Norway": "Norway has many rivers, most of them short and steep, running from the mountains to fjords.",
    "Film directors": "A film director controls a film's artistic and dramatic aspects and guides the actors.",
}


def _load(store: Milvus, embedding, collection: str, titles: list[str] | None = None, **init: bool) -> None:
    chunks = [
        Chunk(text=PASSAGES[title], reference=f"{title}.txt", metadata={"title": title}) for title in titles or PASSAGES
    ]
    embedding.embed_chunks(chunks, show_progress=False)
    store.init_collection(embedding.dimension, collection, embedding_model=embedding.model_name, **init)
    store.insert_data(collection, chunks)


def _titles(store: Milvus, embedding, collection: str, top_k: int) -> list[str]:
    hits = store.search_data(collection, embedding.embed_query(QUESTION), top_k=top_k, query_text=QUESTION)
    return [hit.metadata["title"] for hit in hits]


def test_the_walk_reaches_the_third_hop_that_one_step_misses(tmp_path: Path, embedding):
    with Milvus(uri=str(tmp_path / "walk.db"), graph_walk="links") as store:
        _load(store, embedding, "films")
        one_step = _titles(store, embedding, "films", 3)
        assert "Ada Korven" in one_step and "Lillevik (Norway)" not in one_step  # her page names the town; no hit does
        store.graph_walk = "ppr"
        walked = _titles(store, embedding, "films", 3)
        assert walked[0] == "Harbour Lights" and set(walked[1:]) == {"Ada Korven", "Lillevik (Norway)"}
        store.delete_by_reference("films", "Ada Korven.txt")  # the middle hop gone: no path to the town
        assert "Lillevik (Norway)" not in _titles(store, embedding, "films", 3)
        _load(store, embedding, "films", ["Ada Korven"])  # an incremental load restores the path
        assert set(_titles(store, embedding, "films", 3)) == set(walked)
        store.hide_versions("films", {"v2"})  # a replacement in progress: its new version stays hidden
        replacement = Chunk(
            text="Ada Korven, who directed Harbour Lights, was born by a river in Brekke.",
            reference="Ada Korven.txt",
            metadata={"title": "Ada Korven", "source_hash": "v2"},
        )
        embedding.embed_chunks([replacement], show_progress=False)
        store.insert_data("films", [replacement])
        vector = embedding.embed_query(QUESTION)
        hits = store.search_data("films", vector, top_k=5, query_text=QUESTION)
        linked = store._titled("films", ["Ada Korven"], vector, None)  # the walk's look-up of a name's chunks
        assert not any("Brekke" in hit.text for hit in [*hits, *linked]) and linked  # no hidden row either


def test_an_unknown_walk_is_refused_by_name(tmp_path: Path):
    with pytest.raises(ConfigurationError, match="graph_walk must be one of links, ppr, not 'pagerank'"):
        Milvus(uri=str(tmp_path / "x.db"), graph_walk="pagerank")


def test_a_title_is_found_by_its_name_without_the_disambiguation():
    assert title_key("Hello Love (song)") == title_key("Hello love") == "hello love"
    assert title_key("Safe (2012 film)") == "safe" and title_key("(untitled)") == "untitled"


def _hit(title: str, text: str, rank: int) -> RetrievalResult:
    return RetrievalResult(None, text, f"{title}.txt", {"title": title}, 1.0 - rank / 10)


def test_a_name_every_hit_mentions_passes_on_less_than_a_name_one_hit_mentions():
    teams = ["Fjord", "Heron", "Birch", "Tundra"]
    hits = [
        _hit(f"Report {t}", f"This report on the Aurora Cell was written by Team {t}.", i) for i, t in enumerate(teams)
    ]
    pages = {
        "aurora cell": _hit("Aurora Cell", "The Aurora Cell is a battery design.", 9),
        "team fjord": _hit("Team Fjord", "Team Fjord is led by Tomas Eriksen.", 9),
    }
    lookup = lambda names: [pages[normalise(n)] for n in names if normalise(n) in pages]  # noqa: E731 - the store's title query

    def order(**settings: float) -> list[str | None]:
        return [hit.title for hit in spread("Who led the first report?", hits, lookup, 6, SpreadSettings(**settings))]

    flat, damped = order(hub_exponent=0, after_source=False), order(hub_exponent=1, after_source=False)
    assert flat[0] == "Aurora Cell"  # undamped, the page all four hits mention rises above the first hit
    assert damped[0] == "Report Fjord" and damped.index("Team Fjord") < damped.index("Aurora Cell")
    assert order(hub_exponent=0)[:2] == ["Report Fjord", "Aurora Cell"]  # by default, never above its source
    assert spread("plain words", hits[:1], lambda names: [], 3) == hits[:1]  # nothing to follow: left alone


def test_rebuild_gives_a_collection_loaded_without_the_graph_the_same_results(tmp_path: Path, embedding):
    with_graph, without = str(tmp_path / "on.db"), str(tmp_path / "off.db")
    with Milvus(uri=with_graph) as store:
        _load(store, embedding, "films")
        expected = _titles(store, embedding, "films", 4)
    with Milvus(uri=without, graph=False) as store:
        _load(store, embedding, "films")
        assert TITLE_KEY not in store._field_names("films")
    config = write_config(tmp_path / "config.yaml", without)
    runner = CliRunner()
    rebuilt = runner.invoke(app, ["graph", "rebuild", "--collection", "films", "-c", str(config), "--json"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(rebuilt.stdout) == {"collection": "films", "rows": len(PASSAGES)}
    again = runner.invoke(app, ["graph", "rebuild", "--collection", "films", "-c", str(config)])
    assert again.exit_code == 0 and "nothing to do" in again.output
    with Milvus(uri=without) as store:
        assert TITLE_KEY in store._field_names("films") and store.count("films") == len(PASSAGES)
        assert store.get_collection_info("films").embedding_model == embedding.model_name
        assert _titles(store, embedding, "films", 4) == expected
        assert [c.collection_name for c in store.list_collections()] == ["films"]  # no scratch copy left
    missing = runner.invoke(app, ["graph", "rebuild", "--collection", "nope", "-c", str(config)])
    assert missing.exit_code != 0 and "does not exist" in missing.output


def test_rebuild_and_walk_on_the_dense_only_milvus_235_server(milvus_servers, embedding):
    with Milvus(uri=milvus_servers.get("milvus-2.3.5").uri, graph=False) as store:
        _load(store, embedding, "walk235", force_new_collection=True)
        assert store.rebuild_graph("walk235") == len(PASSAGES) and TITLE_KEY in store._field_names("walk235")
        assert store.rebuild_graph("walk235") == 0
    with Milvus(uri=milvus_servers.get("milvus-2.3.5").uri) as store:  # the walk is the default
        assert store.count("walk235") == len(PASSAGES)
        assert {"Ada Korven", "Lillevik (Norway)"} <= set(_titles(store, embedding, "walk235", 3))
