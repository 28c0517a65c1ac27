"""`make demo`: load the bundled sample documents, search them, and answer a question with citations.

Runs offline with the built-in defaults (local embedding model, embedded Milvus Lite). The answer
needs an LLM: an API key when one is set (OPENAI_API_KEY), else the small local model in this
process when its runtime and file are present (`make local-llm` puts them there), else the demo
says in one line how to get one. `--local` (`make demo-local`) always uses the local model
(demo_local_config.yaml: no key, no server).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from deepsearcher import configuration  # noqa: E402
from deepsearcher.config import Configuration  # noqa: E402
from deepsearcher.llm.gguf_models import resolve_model  # noqa: E402
from deepsearcher.offline_loading import load_from_local_files  # noqa: E402
from deepsearcher.online_query import naive_retrieve  # noqa: E402
from deepsearcher.types.errors import DeepSearcherError, MissingAPIKeyError  # noqa: E402

QUESTION = "Which engineer led the battery that powered the Svalbard weather station, and what had he designed before?"
LOCAL_MODEL = "qwen2.5-coder-0.5b-instruct"
HOW_TO_ANSWER = (
    "No LLM for an answer yet: run `make demo-local` (a 0.5B model in this process, no key) "
    "or set OPENAI_API_KEY and run `make demo` again."
)
NEXT = (
    "Next: .venv/bin/deepsearcher search 'Aurora cell' --config examples/demo_config.yaml "
    "(or `source .venv/bin/activate` first and drop the .venv/bin/)."
)


def local_model_present() -> bool:
    """Whether the in-process model can answer now: llama-cpp-python installed and the model file
    already assembled (nothing is downloaded or built by `make demo`)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    try:
        resolve_model(LOCAL_MODEL, download=False)
    except DeepSearcherError:
        return False
    return True


def main() -> int:
    local = "--local" in sys.argv[1:] or (not os.environ.get("OPENAI_API_KEY") and local_model_present())
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
        error = configuration.llm_error
        print(HOW_TO_ANSWER if error is None or isinstance(error, MissingAPIKeyError) else f"No answer: {error}")
        print(NEXT)
        return 0 if summary.ok else 1
    from deepsearcher.online_query import query_result

    if local:
        print(f"Asking the local model {LOCAL_MODEL} in this process (on a CPU this takes a while)…")
    result = query_result(QUESTION, collections=["demo"])
    print(result.format_answer())
    print()
    print(NEXT)
    return 0 if summary.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
