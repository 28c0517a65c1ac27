"""Runs inside upstream DeepSearcher's venv (deepsearcher==0.0.2), called by benchmarks/ingest.py.

    UPSTREAM_PYTHON _upstream_ingest.py CORPUS_JSONL VARIANT MODEL_DIR

Loads the corpus with upstream's own `load_from_local_files` (JsonFileLoader → splitter →
embed_chunks in batches of 256 → Milvus Lite) and prints one JSON line: chunks, seconds,
peak RSS. VARIANT is "own" (upstream's SentenceTransformerEmbedding given the bundled
MiniLM folder, which only needs its dimension added to upstream's table) or "window" (a
minimal BaseEmbedding that gives each 256-chunk batch to a single `encode` call, so
sentence-transformers length-sorts the whole batch). Nothing here imports this repository.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time


def build_embedding(variant: str, model_dir: str):
    from deepsearcher.embedding import sentence_transformer_embedding as upstream_st
    from deepsearcher.embedding.base import BaseEmbedding

    if variant == "own":
        upstream_st.SENTENCE_TRANSFORMER_MODEL_DIM_MAP[model_dir] = 384
        return upstream_st.SentenceTransformerEmbedding(model=model_dir)

    from sentence_transformers import SentenceTransformer

    class WindowEmbedding(BaseEmbedding):
        def __init__(self) -> None:
            self.client = SentenceTransformer(model_dir, device="cpu")

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.client.encode(texts, show_progress_bar=False).tolist()

        @property
        def dimension(self) -> int:
            return 384

    return WindowEmbedding()


def main() -> None:
    corpus, variant, model_dir = sys.argv[1:4]
    from deepsearcher import configuration
    from deepsearcher.loader.file_loader import JsonFileLoader, PDFLoader
    from deepsearcher.offline_loading import load_from_local_files
    from deepsearcher.vector_db import Milvus

    started = time.perf_counter()
    configuration.embedding_model = build_embedding(variant, model_dir)
    load_seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        configuration.vector_db = Milvus(uri=f"{folder}/milvus.db", default_collection="bench")
        # A folder of a user's documents (benchmarks/real_corpus.py): upstream's default loader
        # (PDFLoader reads .pdf, .md and .txt); one JSONL corpus: its JSON loader.
        folder_input = not corpus.endswith(".jsonl")
        configuration.file_loader = PDFLoader() if folder_input else JsonFileLoader(text_key="text")
        started = time.perf_counter()
        load_from_local_files(corpus, collection_name="bench", force_new_collection=True, batch_size=256)
        seconds = time.perf_counter() - started
        chunks = configuration.vector_db.client.query(collection_name="bench", output_fields=["count(*)"])[0][
            "count(*)"
        ]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "variant": variant,
                "chunks": chunks,
                "seconds": seconds,
                "model_load_seconds": load_seconds,
                "peak_rss_mib": peak,
            }
        )
    )


if __name__ == "__main__":
    main()
