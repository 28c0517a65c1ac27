"""Small builders shared by tests (not fixtures: plain functions)."""

from __future__ import annotations

from pathlib import Path

# The store tests' corpus and builders ship with the package (the store contract mixins use them).
from deepsearcher.testing.store_corpus import (  # noqa: F401 - re-exported for the tests
    DISTRACTORS,
    MODEL,
    QUERY,
    TARGET,
    RenamedEmbedding,
    loaded,
    make_chunks,
    make_docs,
)


def write_config(path: Path, milvus_uri: str, extra: str = "") -> Path:
    """A config.yaml that keeps the store in the test's temp dir."""
    path.write_text(
        f'provide_settings:\n  vector_db:\n    provider: "Milvus"\n    config:\n      uri: "{milvus_uri}"\n{extra}',
        encoding="utf-8",
    )
    return path


def components_for(config_path: Path | str | None, **kwargs: object):  # noqa: ANN201 - Components
    """What a front-end builds at start for `config_path` (`deepsearcher mcp -c`, a CLI command)."""
    from deepsearcher.app.components import build_components
    from deepsearcher.config import Configuration

    return build_components(Configuration(config_path), **kwargs)  # type: ignore[arg-type]


#: Opening words of the agents' prompts, to script the LLM stand-in's reply to each step.
SUB_QUERIES_PROMPT = "Break the question below"
JUDGE_PROMPT = "Does the passage below contain"
ANSWER_PROMPT = "Answer the question using only the numbered sources"
#: Retry delays short enough for tests.
FAST_RETRIES = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}
