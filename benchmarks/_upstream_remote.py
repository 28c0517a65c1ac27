"""Runs inside upstream DeepSearcher's venv (deepsearcher==0.0.2), called by benchmarks/remote_embedding.py.

    UPSTREAM_PYTHON _upstream_remote.py CORPUS_DIR BASE_URL DIM BATCH_SIZE

Loads the corpus with upstream's own `load_from_local_files` (JsonFileLoader -> splitter ->
`embed_chunks`, one batch at a time -> Milvus Lite insert), with upstream's `OpenAIEmbedding`
pointed at the stand-in API (model text-embedding-3-small, `dimension` = the stand-in's),
and prints one JSON line: chunks stored and seconds. Nothing here imports this repository.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    corpus, base_url, dim, batch_size = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    # the files one by one: upstream's JsonFileLoader.load_directory only picks up .txt/.md files
    files = sorted(str(path) for path in corpus.glob("*.jsonl"))
    from deepsearcher import configuration
    from deepsearcher.embedding import OpenAIEmbedding
    from deepsearcher.loader.file_loader import JsonFileLoader
    from deepsearcher.offline_loading import load_from_local_files
    from deepsearcher.vector_db import Milvus

    configuration.embedding_model = OpenAIEmbedding(
        model="text-embedding-3-small", api_key="bench", base_url=base_url, dimension=dim
    )
    with tempfile.TemporaryDirectory() as folder:
        configuration.vector_db = Milvus(uri=f"{folder}/milvus.db", default_collection="bench")
        configuration.file_loader = JsonFileLoader(text_key="text")
        started = time.perf_counter()
        load_from_local_files(files, collection_name="bench", force_new_collection=True, batch_size=batch_size)
        seconds = time.perf_counter() - started
        rows = configuration.vector_db.client.query(collection_name="bench", output_fields=["count(*)"])
    print(json.dumps({"chunks": rows[0]["count(*)"], "seconds": seconds}))


if __name__ == "__main__":
    main()
