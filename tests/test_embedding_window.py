"""Every character of a chunk is embedded: the model declares its window, the default chunk
size follows it, and a text longer than the window is embedded as several windows (issue 31)."""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
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


class StandInFastEmbed:
    """`fastembed.TextEmbedding` as far as FastEmbedEmbedding uses it. FastEmbed itself cannot be
    installed here (it pins huggingface-hub<2), so this stands in for it with real parts: the
    bundled MiniLM's own tokenizer.json, cut at 256 tokens the way FastEmbed's tokenizer cuts, and
    the real bundled model reading only what that cut keeps (FastEmbed's silent truncation)."""

    def __init__(self, embedding: Any, expose_tokenizer: bool = True) -> None:
        from tokenizers import Tokenizer

        from deepsearcher.embedding._bundled import bundled_model_dir

        self.tokenizer = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=256)
        self.embedding = embedding
        self.model = types.SimpleNamespace(tokenizer=self.tokenizer if expose_tokenizer else None)

    def passage_embed(self, texts: list[str], batch_size: int = 256) -> Iterator[np.ndarray]:
        for encoding, text in zip(self.tokenizer.encode_batch(texts), texts, strict=True):
            kept = text[: max(end for _, end in encoding.offsets)]  # what FastEmbed's model reads
            yield np.asarray(self.embedding.embed_documents([kept])[0])

    def query_embed(self, texts: list[str]) -> Iterator[np.ndarray]:
        return self.passage_embed(texts)


@pytest.mark.parametrize("expose_tokenizer", [True, False])
def test_fastembed_declares_its_window_and_embeds_past_it(embedding, monkeypatch, caplog, expose_tokenizer):
    """FastEmbed cuts a text at its window: with its tokenizer in reach the text is embedded as
    windows (the appended sentence moves the vector); without it, a warning names the model."""
    from deepsearcher.embedding.fastembed_embedding import FastEmbedEmbedding

    stand_in = StandInFastEmbed(embedding, expose_tokenizer)
    module = types.SimpleNamespace(TextEmbedding=lambda **kwargs: stand_in)
    module.TextEmbedding.list_supported_models = lambda: [{"model": "stand-in/minilm", "dim": 384}]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fastembed", module)
    monkeypatch.setattr("deepsearcher.embedding.fastembed_embedding.require", lambda name, **kw: module)
    provider = FastEmbedEmbedding("stand-in/minilm")
    with caplog.at_level(logging.WARNING, logger="deepsearcher.embedding.fastembed_embedding"):
        short, without, with_heron = (
            np.asarray(v) for v in provider.embed_documents(["a short note", LONG_TEXT, f"{LONG_TEXT} {HERON}"])
        )
    heron = np.asarray(embedding.embed_query("obsidian heron"))
    assert np.allclose(short, embedding.embed_documents(["a short note"])[0], atol=1e-6)  # a text that fits: as is
    if expose_tokenizer:
        assert provider.window_tokens == 256 and provider.default_chunk_size() == chunk_size_for_window(256)
        assert float(with_heron @ heron) > float(without @ heron) + 0.04
        assert not caplog.records
    else:
        assert provider.window_tokens is None
        assert np.allclose(without, with_heron)  # FastEmbed cut the heron off ...
        [record] = caplog.records  # ... and the user is told, once, naming the model
        assert "stand-in/minilm" in record.getMessage() and "cut off" in record.getMessage()


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
