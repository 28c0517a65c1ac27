"""JSON as a type: what parsed JSON, stored metadata and API payloads may hold.

One recursive alias instead of `Any`, so mypy checks the code that reads such values (a
value must be narrowed with isinstance before it is used as a str, a number or a dict)."""

from __future__ import annotations

from typing import TypeAlias

#: A JSON scalar.
JSONScalar: TypeAlias = str | int | float | bool | None
#: Any JSON value: a scalar, a list of values or an object.
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
#: A JSON object, as `json.loads` returns it for `{...}`.
JSONObject: TypeAlias = dict[str, JSONValue]
