"""A per-document cap: one long file does not fill a search's results or an agent's context."""

from __future__ import annotations

from pathlib import Path

from helpers import components_for, write_config

from deepsearcher.agent.retriever import PER_DOCUMENT, Retriever
from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.app.searching import SearchRequest, search


def test_search_and_the_retriever_take_at_most_three_chunks_of_one_document(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    long_text = "\n\n".join(f"Blue whales, note {n}: blue whales feed on krill in cold seas." for n in range(40))
    (docs / "long.md").write_text(f"# Whale notes\n\n{long_text}\n", encoding="utf-8")
    (docs / "short1.md").write_text("# Krill\n\nKrill are eaten by blue whales.\n", encoding="utf-8")
    (docs / "short2.md").write_text("# Seas\n\nCold seas hold the krill blue whales eat.\n", encoding="utf-8")
    components = components_for(write_config(tmp_path / "config.yaml", str(tmp_path / "m.db")), skip=("llm",))
    with components.vector_db:
        assert load(components, LoadRequest(inputs=[str(docs)], chunk_size=200, chunk_overlap=0)).ok
        hits = search(components, SearchRequest(query="blue whales krill cold seas", top_k=5)).hits
        references = [Path(hit.result.reference).name for hit in hits]
        assert len(hits) == 5 and references.count("long.md") == PER_DOCUMENT
        assert {"short1.md", "short2.md"} <= set(references)
        context = components.retriever.search("blue whales krill cold seas", ["deepsearcher"], top_k=5)
        assert [Path(r.reference).name for r in context].count("long.md") == PER_DOCUMENT
        uncapped = Retriever(components.embedding_model, components.vector_db, per_document=None)
        found = uncapped.search("blue whales krill cold seas", ["deepsearcher"], top_k=10)
        assert [Path(r.reference).name for r in found].count("long.md") > PER_DOCUMENT  # the cap is what limits it
