"""`make demo`: load the bundled sample documents, search them, and ask a deep question.

Runs offline with the built-in defaults (local embedding model, embedded Milvus Lite).
The deep query needs an LLM; without one the demo says in one line how to add it.
`--local` (`make demo-local`) answers with the small local model in this process instead
(demo_local_config.yaml: no key, no server).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from deepsearcher import configuration  # noqa: E402
from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.offline_loading import load_from_local_files  # noqa: E402
from deepsearcher.online_query import naive_retrieve  # noqa: E402

QUESTION = "Which engineer led the battery that powered the Svalbard weather station, and what had he designed before?"


def main() -> int:
    local = "--local" in sys.argv[1:]
    config_path = HERE / ("demo_local_config.yaml" if local else "demo_config.yaml")
    configuration.init_config(Configuration(config_path))
    summary = load_from_local_files(
        HERE / "data",
        collection_name="demo",
        collection_description="Sample documents about the Aurora sodium-ion cell and Halvorsen Energy Lab",
    )
    print(
        f"Loaded {len(summary.loaded) + len(summary.replaced)} sources ({summary.chunks_inserted} chunks), "
        f"{len(summary.skipped_unchanged)} unchanged, {len(summary.failed)} failed, in {summary.seconds:.1f} s."
    )
    for failure in summary.failed:
        print(f"  failed: {failure.source}: {failure.reason}")

    print(f"\nSearch: {QUESTION}")
    for rank, result in enumerate(naive_retrieve(QUESTION, collection="demo", top_k=3), 1):
        title = f" [{result.title}]" if result.title else ""
        snippet = " ".join(result.text.split())[:110]
        print(f"  {rank}. {result.score:.3f}  {Path(result.reference).name}{title}: {snippet}…")

    print()
    if configuration.llm is None:
        print(f"Deep query skipped: {configuration.llm_error}")
        return 0 if summary.ok else 1
    from deepsearcher.online_query import query_result

    if local:
        print(f"Asking {configuration.llm!r} (on a CPU this takes a while)…")
    result = query_result(QUESTION, collections=["demo"])
    print(result.format_answer())
    return 0 if summary.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
