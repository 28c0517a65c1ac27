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
