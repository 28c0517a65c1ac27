"""Per-call agent options as typed schemas: each default and bound is written once, here or in
the agent's own file, and every front-end (CLI, REST, MCP, config files) validates against it.

An agent declares `Options = SomeOptions` (a subclass of `AgentOptions`); a new option is a new
field there, and `--option name=value`, the REST `options` object, MCP's `options` argument and
`query_settings` all accept it without another edit.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deepsearcher.types.errors import BadInputError

__all__ = [
    "AgentOptions",
    "ChainOptions",
    "IterativeOptions",
    "MaxIter",
    "QueryLimits",
    "TopK",
    "describe_errors",
    "describe_validation_error",
    "unknown_option",
    "validate_options",
]

#: Research rounds: at least one, and a bound that keeps a query's cost and time in reach.
MaxIter = Annotated[int, Field(ge=1, le=20, description="Research rounds at most.")]
#: Chunks retrieved per search.
TopK = Annotated[int, Field(ge=1, le=100, description="Chunks retrieved per search.")]


class AgentOptions(BaseModel):
    """What every agent accepts per call; subclasses add their own fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    top_k: TopK = 10
    web: Literal["off", "auto", "always"] = Field(
        "off",
        description="Research the web beside the private collections: off, auto (when the collection router "
        "finds they do not answer) or always.",
    )


class IterativeOptions(AgentOptions):
    """An agent that researches in rounds."""

    max_iter: MaxIter = 3


class ChainOptions(IterativeOptions):
    """ChainOfRAG: a follow-up question per round."""

    early_stopping: bool = Field(False, description="Stop as soon as the found facts answer the question.")


def unknown_option(name: str, known: Collection[str], where: str = "") -> str:
    """'unknown option 'max_iters' (did you mean 'max_iter'?)', naming the known ones when `where` is given."""
    close = difflib.get_close_matches(name, list(known), n=1)
    text = f"unknown option '{name}'" + (f" (did you mean '{close[0]}'?)" if close else "")
    return f"{where}: {text}. Known options: {', '.join(sorted(known))}." if where else text


def describe_validation_error(exc: ValidationError, where: str = "", known: Collection[str] = ()) -> str:
    """One readable sentence per problem: 'max_iter: Input should be less than or equal to 20 (got 50)';
    an unknown name gets the closest of `known`."""
    return describe_errors(list(exc.errors()), where, known)


def describe_errors(errors: Sequence[Mapping[str, Any]], where: str = "", known: Collection[str] = ()) -> str:
    """`describe_validation_error` for some of a ValidationError's `errors()`."""
    parts = []
    for error in errors:
        name = ".".join(str(item) for item in error["loc"]) or "options"
        if error["type"] == "extra_forbidden":
            parts.append(unknown_option(name, known))
            continue
        parts.append(f"{name}: {error['msg']} (got {error['input']!r})")
    prefix = f"{where}: " if where else ""
    return prefix + "; ".join(parts) + "."


def validate_options(
    schema: type[AgentOptions],
    values: Mapping[str, object],
    where: str = "options",
    error: type[Exception] = BadInputError,
) -> AgentOptions:
    """`values` checked against `schema` (lax: "3" is 3, "true" is True), or `error` naming each problem
    and, for an unknown name, the options the schema has."""
    try:
        return schema.model_validate(dict(values))
    except ValidationError as exc:
        known = sorted(schema.model_fields)
        message = describe_validation_error(exc, where, known)
        raise error(f"{message} Options of this agent: {', '.join(known)}.") from None


class QueryLimits(BaseModel):
    """A query's own limits, beside the agent's options: one schema for config, CLI, REST and MCP."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    max_tokens: int | None = Field(None, ge=1, description="Token budget of the whole query.")
    timeout: float | None = Field(
        None,
        gt=0,
        le=86400,
        description="Overall deadline in seconds (default: query_settings.timeout, else 300).",
    )
    relevance_floor: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="Cosine similarity under which a search hit is marked weak (default: the model's measured one).",
    )

    @classmethod
    def check(
        cls, values: Mapping[str, object], where: str = "query", error: type[Exception] = BadInputError
    ) -> QueryLimits:
        """The limits among `values` (other keys ignored), or `error` naming the wrong one."""
        try:
            return cls.model_validate({key: values[key] for key in cls.model_fields if key in values})
        except ValidationError as exc:
            raise error(describe_validation_error(exc, where)) from None
