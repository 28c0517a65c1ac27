"""The base of the use cases' request models: one model per use case, written once and shared.

`POST /v1/query` validates its body against `querying.QueryRequest` itself (FastAPI: 422 with the
field), while the CLI, MCP and Python callers construct the same class (BadInputError naming the
field, 400 over REST), so a limit or a description is written in one place for every front-end.
"""

from __future__ import annotations

from typing import Annotated

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import Self

from deepsearcher.types.errors import BadInputError

#: A collection (or agent) name as a request carries it.
RequestName = Annotated[str, Field(max_length=255)]


class RequestModel(BaseModel):
    """A checked, frozen request. `create` is how the CLI, MCP and Python callers build one (a
    wrong value is BadInputError naming the field); FastAPI validates REST bodies against the
    class itself (pydantic's ValidationError: 422)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def create(cls, **values: object) -> Self:
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise BadInputError(describe_request_error(cls, exc)) from None


def describe_request_error(model: type[BaseModel], exc: ValidationError) -> str:
    """The first error of `exc` in the words the front-ends have always used."""
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else "request"
    field = ".".join(str(part) for part in error["loc"]) or "request"
    value = error.get("input")
    context = error.get("ctx") or {}
    kind = error["type"]
    if kind == "string_too_long":
        return f"'{field}' is {len(str(value))} characters long; at most {context.get('max_length')}."
    if kind in ("string_too_short", "value_error") and isinstance(value, str) and not value.strip():
        return f"'{field}' is empty."
    if kind in ("greater_than_equal", "less_than_equal") and name in model.model_fields:
        low, high = _bounds(model, name)
        if low is not None and high is not None:
            return f"{name} must be between {low} and {high}, got {value}."
    return f"'{field}': {str(error['msg']).removeprefix('Value error, ')}, got {value!r}."


def _bounds(model: type[BaseModel], name: str) -> tuple[object, object]:
    low = high = None
    for item in model.model_fields[name].metadata:
        if isinstance(item, annotated_types.Ge):
            low = item.ge
        elif isinstance(item, annotated_types.Le):
            high = item.le
    return low, high


def not_blank(value: str) -> str:
    """A text field's check: something besides whitespace."""
    if not value.strip():
        raise ValueError("is empty")
    return value
