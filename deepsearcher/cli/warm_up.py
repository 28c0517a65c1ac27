"""Load what a query will need while its agent waits for the first LLM reply.

A query's first LLM call (the sub-queries) comes before its first search, and an LLM takes
seconds to answer: the bundled embedding model (~0.5 s) and, for a Chinese question on Milvus
Lite, jieba's dictionary (~0.8 s of CPU, read when the query's Chinese is cut into words) load
in those seconds instead of after them. Each still loads once: both loaders are locked, the
searches wait for the same load. jieba is not loaded for other questions: collections made by
this version cut only Chinese text with it, and an older collection whose BM25 analyzer runs
jieba loads it in the agent's own warm-up search (`Retriever.start_warm_up`). Loading it for
nothing took the CPU (and the GIL) from the query's own start.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from deepsearcher.vector_db.word_segmentation import has_chinese, load_dictionary

if TYPE_CHECKING:
    from deepsearcher.app.components import Components

logger = logging.getLogger(__name__)


def warm_up_in_background(components: Components, question: str = "") -> list[threading.Thread]:
    """Start the loads `components` will need for searching `question`; returns the threads started."""
    jobs: list[tuple[str, Callable[[], object]]] = []
    model = components.embedding_model
    if model.runs_locally:  # a remote one is never called ahead: a request, maybe a bill, for nothing
        jobs.append(("embedding model", lambda: model.embed_query("warm-up")))
    # Milvus Lite tokenises in this process; a Milvus server does it on its own side.
    if has_chinese(question) and "milvus_lite" in sys.modules and importlib.util.find_spec("jieba") is not None:
        jobs.append(("jieba dictionary", load_dictionary))
    threads = [
        threading.Thread(target=_run, args=(name, job), name=f"warm-up {name}", daemon=True) for name, job in jobs
    ]
    for thread in threads:
        thread.start()
    return threads


def _run(name: str, job: Callable[[], object]) -> None:
    try:
        job()
    except Exception:  # the search that needs it loads it again and reports the error itself
        logger.info("loading the %s ahead failed", name, exc_info=True)
