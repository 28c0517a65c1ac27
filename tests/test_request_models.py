"""One request model per use case, shared by every front-end: REST validates its bodies against
the very classes the CLI, MCP and Python callers build, and a wrong value is named the same way."""

from __future__ import annotations

import json

import pytest

from deepsearcher.app.loading import LoadRequest
from deepsearcher.app.querying import QueryRequest
from deepsearcher.app.searching import SearchRequest
from deepsearcher.types.errors import BadInputError


def test_rest_bodies_are_the_use_cases_own_models() -> None:
    from deepsearcher.server.routes_v1 import router

    bodies = {route.path: route.body_field.field_info.annotation for route in router.routes if route.body_field}
    assert bodies["/v1/query"] is QueryRequest and bodies["/v1/search"] is SearchRequest
    assert bodies["/v1/load"] is LoadRequest


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: SearchRequest.create(query="  "), "'query' is empty"),
        (lambda: SearchRequest.create(query="x", top_k=0), "top_k must be between 1 and 100, got 0"),
        (lambda: QueryRequest.create(question="x" * 20_001), "'question' is 20001 characters long; at most 20000"),
        (lambda: QueryRequest.create(question="q", web="sometimes"), "'web'"),
        (lambda: QueryRequest.create(question="q", colections=["a"]), "'colections'"),
        (lambda: QueryRequest.create(question="q", agent="deeep"), "Unknown agent 'deeep'"),
        (lambda: LoadRequest.create(inputs=["/d"], max_depth=99), "max_depth must be between 0 and 10, got 99"),
        (lambda: LoadRequest.create(inputs=["/d"], chunk_size=0), "'chunk_size'"),
        (lambda: LoadRequest.create(inputs=["/d"], refesh=True), "'refesh'"),
    ],
)
def test_a_wrong_value_is_bad_input_naming_the_field(build, named: str) -> None:
    with pytest.raises(BadInputError, match=named.replace("(", r"\(")):
        build()


def test_requests_are_frozen_and_keep_their_values() -> None:
    request = QueryRequest.create(question="Who?", agent="naive", collections=["kb"], options={"top_k": 3})
    assert (request.agent, request.collections, request.options, request.web) == ("naive", ["kb"], {"top_k": 3}, None)
    with pytest.raises(ValueError, match="frozen"):
        request.question = "changed"  # type: ignore[misc]


def test_a_load_job_records_its_request_whole_and_reads_it_back() -> None:
    """The REST job spec is the request serialised by the model: every field comes back (a field
    copied by hand was once lost on the way: `refresh`), and a resumed job never drops again."""
    from deepsearcher.server.services import job_spec, request_from_spec

    values = {
        "inputs": ["/srv/docs", "https://example.com/a"],
        "collection": "kb",
        "description": "handbook",
        "force_new_collection": True,
        "chunk_size": 500,
        "chunk_overlap": 20,
        "batch_size": 16,
        "max_depth": 2,
        "max_pages": 30,
        "crawl_options": {"include_patterns": ["/docs/"]},
        "text_extensions": ["cfg"],
        "text_key": "body",
        "sync": True,
        "refresh": True,
    }
    request = LoadRequest.create(**values)
    assert all(getattr(request, name) != field.default for name, field in LoadRequest.model_fields.items())
    spec = json.loads(json.dumps(job_spec(request)))  # as the job store keeps it
    assert request_from_spec("kb", spec) == request
    assert request_from_spec("kb", spec, resuming=True) == request.model_copy(update={"force_new_collection": False})
