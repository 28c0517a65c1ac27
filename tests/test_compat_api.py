"""DeepSearcher's Python API names work unchanged: init_config(config=...), utils.log,
stored vectors in RetrievalResult.embedding, and every public name it exports."""

from __future__ import annotations

import importlib
import json
import logging
from pathlib import Path

import pytest
from helpers import DISTRACTORS, TARGET, loaded, write_config

from deepsearcher import configuration
from deepsearcher.config import Configuration
from deepsearcher.vector_db.milvus import Milvus

EXPORTS = json.loads((Path(__file__).parent / "compat_data" / "upstream_exports.json").read_text())["modules"]


def test_init_config_takes_the_config_keyword(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = Configuration(config_path=str(write_config(tmp_path / "c.yaml", str(tmp_path / "kw" / "milvus.db"))))
    configuration.init_config(config=config)
    try:
        assert configuration.config is config
        assert configuration.vector_db.uri.endswith("kw/milvus.db")
    finally:
        configuration.vector_db.close()


@pytest.mark.parametrize(("module", "names"), sorted(EXPORTS.items()))
def test_every_upstream_public_name_imports(module: str, names: list[str]) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in names if not hasattr(imported, name)]
    assert missing == [], f"{module} lacks {missing}"


def test_log_helpers_behave_like_deepsearchers() -> None:
    from deepsearcher.utils import log

    class Recorder(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.seen: list[tuple[str, str, str]] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.seen.append((record.name, record.levelname, record.getMessage()))

    recorder = Recorder()
    for logger in (log.dev_logger, log.progress_logger):
        logger.addHandler(recorder)
    try:
        log.set_dev_mode(False)
        log.info("hidden info")
        log.warning("hidden warning")
        log.color_print("progress line")
        log.set_dev_mode(True)
        log.set_level(logging.DEBUG)
        log.debug("shown debug")
        log.error("shown error")
        with pytest.raises(RuntimeError, match="fatal thing"):
            log.critical("fatal thing")
    finally:
        log.set_dev_mode(False)
        log.set_level(logging.INFO)
        for logger in (log.dev_logger, log.progress_logger):
            logger.removeHandler(recorder)
    assert recorder.seen == [
        ("progress", "INFO", "progress line"),
        ("dev", "DEBUG", "shown debug"),
        ("dev", "ERROR", "shown error"),
        ("dev", "CRITICAL", "fatal thing"),
    ]


def test_colored_formatter_colours_by_level() -> None:
    from deepsearcher.utils.log import ColoredFormatter

    record = logging.LogRecord("dev", logging.WARNING, __file__, 1, "careful", None, None)
    assert ColoredFormatter("%(message)s", color=True).format(record) == "\033[33mcareful\033[0m"
    assert ColoredFormatter("%(message)s", color=False).format(record) == "careful"


def test_retrieval_result_holds_the_stored_vector_when_asked(milvus_uri: str, embedding) -> None:
    with Milvus(uri=milvus_uri) as store:
        chunks = loaded(store, embedding)
        query = embedding.embed_query(TARGET)
        plain = store.search_data("docs", query, top_k=1)
        asked = store.search_data("docs", query, top_k=1, with_embedding=True)
    assert plain[0].embedding is None
    assert asked[0].text == TARGET
    stored = next(chunk.embedding for chunk in chunks if chunk.text == TARGET)
    assert asked[0].embedding == pytest.approx(stored, abs=1e-6)

    with Milvus(uri=milvus_uri, return_embedding=True) as store:  # vector_db.config.return_embedding: true
        results = store.search_data("docs", query, top_k=2)
    assert [len(result.embedding) for result in results] == [embedding.dimension] * 2
    assert results[1].text in DISTRACTORS


def test_the_oldest_prompt_functions_build_todays_prompts() -> None:
    from deepsearcher.agent import prompt

    routing = prompt.get_vector_db_search_prompt(
        "Who baked it?", [{"collection_name": "recipes", "collection_description": "Bread notes"}], None
    )
    assert "Who baked it?" in routing and "recipes: Bread notes" in routing
    args = ("Who baked it?", ["recipes"], ["baker of the loaf"], ["Ada baked the loaf."])
    reflect, final = prompt.get_reflect_prompt(*args), prompt.get_final_answer_prompt(*args)
    assert "- baker of the loaf" in reflect and "Ada baked the loaf." in reflect
    assert "[1] (recipes; baker of the loaf) Ada baked the loaf." in final and "Who baked it?" in final
