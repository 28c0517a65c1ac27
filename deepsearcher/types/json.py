"""JSON as a type: what parsed JSON, stored metadata and API payloads may hold.

One recursive alias instead of `Any`, so mypy checks the code that reads such values (a
value must be narrowed with isinstance before it is used as a str, a number or a dict)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

#: A JSON scalar.
JSONScalar: TypeAlias = str | int | float | bool | None
#: Any JSON value: a scalar, an array or an object. Arrays and objects are the read-only
#: (covariant) views, so a `list[float]` or a `dict[str, int]` is a JSONValue as it is;
#: narrow with isinstance(value, list) / isinstance(value, dict) before changing one.
JSONValue: TypeAlias = JSONScalar | Sequence["JSONValue"] | Mapping[str, "JSONValue"]
#: A JSON object, as `json.loads` returns it for `{...}`.
JSONObject: TypeAlias = dict[str, JSONValue]
