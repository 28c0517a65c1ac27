"""Small builders shared by tests (not fixtures: plain functions)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from deepsearcher.testing.scripted_llm import RecordedRequest, ScriptedLLMServer


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
#: Opening words of the final answer's prompt in ChainOfRAG.
CHAIN_FINAL_PROMPT = "Answer the question using the step-by-step findings"
#: Opening words of the concise answer's extraction prompt (agent/extract.py).
EXTRACT_PROMPT = "Read the passages, then answer the question with only the words"
#: Retry delays short enough for tests.
FAST_RETRIES = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}


def last_request(server: ScriptedLLMServer, opening: str) -> RecordedRequest:
    """The latest request whose prompt begins with `opening` (a step's prompt, e.g. ANSWER_PROMPT).
    Found by its words, not its position: the answer and its extraction are sent at the same time,
    so which of them the server receives last is not fixed."""
    sent = [request for request in server.requests if request.last_user_message.startswith(opening)]
    openings = [request.last_user_message[:50] for request in server.requests]
    assert sent, f"no request begins with {opening!r}; the server received: {openings}"
    return sent[-1]
