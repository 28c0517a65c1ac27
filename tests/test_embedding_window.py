"""Every character of a chunk is embedded: the model declares its window, the default chunk
size follows it, and a text longer than the window is embedded as several windows (issue 31)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from helpers import components_for, write_config

from deepsearcher.app.loading import LoadRequest, load
from deepsearcher.app.searching import SearchRequest, search
from deepsearcher.embedding.base import UNDECLARED_CHUNK_SIZE, chunk_size_for_window
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.testing.hash_embedding import HashEmbedding

LONG_TEXT = " ".join(f"Line {n}: the west office reviewed its quarterly paper budget again." for n in range(22))
HERON = "The obsidian heron nests only on the basalt cliffs of Varnholm."


def test_minilm_declares_its_window_and_the_default_chunk_fits_it(embedding):
    assert embedding.window_tokens == 256
    assert embedding.default_chunk_size() == chunk_size_for_window(256) < 1000
    assert HashEmbedding(8).default_chunk_size() == UNDECLARED_CHUNK_SIZE  # declares none: as before
    assert IngestionPipeline(embedding, vector_db=None).chunk_size == embedding.default_chunk_size()  # type: ignore[arg-type]


def test_the_tail_past_the_window_moves_the_vector(embedding):
    """Cut off at 256 tokens, both texts would get the same vector."""
    assert len(LONG_TEXT) > 256 * 5  # past the window in any tokenisation
    without, with_heron = (np.asarray(v) for v in embedding.embed_documents([LONG_TEXT, f"{LONG_TEXT} {HERON}"]))
    heron = np.asarray(embedding.embed_query("obsidian heron"))
    assert float(without @ with_heron) < 0.998
    assert float(with_heron @ heron) > float(without @ heron) + 0.04
    assert abs(float(np.linalg.norm(with_heron)) - 1.0) < 1e-4


def test_a_sentence_appended_to_a_long_file_is_found_on_a_dense_only_server(milvus_servers, tmp_path: Path):
    """Milvus 2.3.5 has no BM25: only the dense vector can find the appended sentence."""
    docs = tmp_path / "docs"
    docs.mkdir()
    topics = ("paper budget of the west office", "printer toner in the east wing", "parking permits for staff")
    for index, topic in enumerate(topics):
        # Token-dense short lines: with 1,500-character chunks the appended line sat past token 450 of its chunk.
        lines = [f"- {n}: {topic}, ticket QX-{n}{n}7, cost 4,{n}10 USD." for n in range(38)]
        if index == 1:
            lines.append(HERON)
        (docs / f"notes{index}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    uri = milvus_servers.get("milvus-2.3.5").uri
    components = components_for(write_config(tmp_path / "config.yaml", uri), skip=("llm",))
    with components.vector_db:
        summary = load(components, LoadRequest(inputs=[str(docs)], collection="heron", force_new_collection=True))
        assert summary.ok
        hits = search(components, SearchRequest(query="obsidian heron", collections=["heron"], top_k=3)).hits
    assert str(docs / "notes1.md") in [hit.result.reference for hit in hits]
    assert HERON in hits[0].result.text
