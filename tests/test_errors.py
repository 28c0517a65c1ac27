"""One error hierarchy, one mapping: each kind's HTTP status and exit code come from its type."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from deepsearcher.embedding._http import EmbeddingError
from deepsearcher.llm.errors import LLMError, LLMOutputError
from deepsearcher.server.path_rules import PathRefusedError, resolve_allowed
from deepsearcher.types import errors
from deepsearcher.vector_db.milvus import Milvus


def test_unparseable_llm_replies_and_failed_embeddings_are_bad_gateways() -> None:
    cases = [
        (LLMOutputError("sub_queries", "no JSON here"), "llm_output"),
        (LLMError("OpenAI", "gpt-4o-mini", "http://127.0.0.1:1/v1", "connection refused"), "llm"),
        (EmbeddingError("Jina", "jina-embeddings-v3", None, "401 Unauthorized"), "embedding"),
    ]
    for exc, kind in cases:
        info = errors.classify(exc)
        assert (info.kind, info.http_status, info.exit_code, info.known) == (kind, 502, 1, True)
        assert info.message == str(exc)


def test_a_missing_collection_is_404_by_type_not_by_its_text(tmp_path: Path) -> None:
    store = Milvus(uri=str(tmp_path / "m.db"))
    try:
        with pytest.raises(errors.CollectionNotFoundError) as caught:
            store.list_sources("nowhere")
    finally:
        store.close()
    assert errors.classify(caught.value).http_status == 404
    # a store error whose text happens to say "does not exist" stays a store error
    assert errors.classify(errors.VectorStoreError("the file does not exist")).http_status == 500


def test_refused_and_malformed_paths(tmp_path: Path) -> None:
    with pytest.raises(PathRefusedError) as outside:
        resolve_allowed("/etc/passwd", [tmp_path])
    with pytest.raises(PathRefusedError) as relative:
        resolve_allowed("docs/a.txt", [tmp_path])
    assert (errors.classify(outside.value).http_status, errors.classify(relative.value).http_status) == (403, 400)
    assert errors.classify(relative.value).exit_code == 2


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (errors.BadInputError("top_k must be >= 1"), 400, 2),
        (errors.ConfigurationError("Unknown key"), 400, 1),
        (errors.MissingDependencyError("mcp", "mcp"), 503, 1),
        (errors.StoreInUseError("locked"), 503, 1),
        (errors.EmbeddingMismatchError("other model"), 409, 1),
        (errors.NoSearchableDataError("nothing loaded"), 409, 1),
        (errors.NotReadyError("starting"), 503, 1),
        (ImportError("No module named 'x'"), 503, 1),
        (FileNotFoundError(2, "No such file"), 500, 1),
    ],
)
def test_every_kind_carries_its_status_and_exit_code(exc: BaseException, status: int, code: int) -> None:
    info = errors.classify(exc)
    assert (info.http_status, info.exit_code, info.known) == (status, code, True)


def test_an_unexpected_error_is_logged_under_an_id_and_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise KeyError("internal detail")
    except KeyError as exc:
        with caplog.at_level(logging.ERROR):
            info = errors.report(exc, logging.getLogger("test"), "unit test")
    assert not info.known and info.http_status == 500 and info.error_id
    assert "internal detail" not in info.message and info.error_id in info.message
    assert info.error_id in caplog.text and "Traceback" in caplog.text
