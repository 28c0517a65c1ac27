"""A provider's constructor options as a schema, checked before anything is built.

`provide_settings.<feature>.config` (a config file, `/set-provider-config/`, `set_provider_config`)
is checked against the provider class's own options: a class may declare them as a pydantic
model in `Options`; otherwise they are read from its `__init__` signature (names, types,
defaults), which is what every built-in and DeepSearcher-style provider has. A misspelt option
then fails at once with the closest name, instead of as a TypeError from deep inside the
constructor, or never: an LLM provider passes the keys it does not know on to the API as
request parameters (`temperature`, `top_p`...), so there only a key that looks like one of
its own options misspelt is refused.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, create_model

from deepsearcher.agent.options import describe_errors
from deepsearcher.types.errors import UnknownOptionError

__all__ = ["check_provider_config", "provider_options"]

#: A key this close (difflib ratio) to one of a provider's own options is a typo, not a request parameter.
TYPO_RATIO = 0.8


@cache
def provider_options(cls: type) -> tuple[type[BaseModel], bool]:
    """The options model of provider `cls` and whether it takes other keywords too (`**kwargs`)."""
    declared = getattr(cls, "Options", None)
    if isinstance(declared, type) and issubclass(declared, BaseModel):
        return declared, declared.model_config.get("extra") == "allow"
    fields: dict[str, typing.Any] = {}
    open_ended = False
    for owner in _constructors(cls):
        init = vars(owner)["__init__"]
        signature = inspect.signature(init)
        try:
            hints = typing.get_type_hints(init)
        except Exception:  # noqa: BLE001 - a hint that cannot be resolved only loses its type check
            hints = {}
        more = False
        for name, parameter in list(signature.parameters.items())[1:]:
            if parameter.kind is parameter.VAR_KEYWORD:
                more = True
                continue
            if parameter.kind is parameter.VAR_POSITIONAL or name in fields:
                continue
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[name] = (_checkable(hints.get(name)), default)
        if not more:
            break  # this constructor takes no more keywords: what the base classes accept does not reach them
        open_ended = True
    else:
        open_ended = True
    model = create_model(
        f"{cls.__name__}Options",
        __config__=ConfigDict(extra="allow" if open_ended else "forbid", arbitrary_types_allowed=True),
        **fields,
    )
    return model, open_ended


def _request_parameters(cls: type) -> frozenset[str] | None:
    listing = getattr(cls, "request_parameters", None)
    return frozenset(listing()) if callable(listing) else None


def _constructors(cls: type) -> list[type]:
    """The classes whose `__init__` a call to `cls(...)` reaches through `**kwargs`, nearest first."""
    return [owner for owner in cls.__mro__ if "__init__" in vars(owner) and owner is not object]


def _checkable(hint: Any) -> Any:
    """`hint` when pydantic can check a value against it, else Any (only the name is checked then)."""
    if hint is None:
        return typing.Any
    try:
        TypeAdapter(hint)
    except Exception:  # noqa: BLE001 - any type pydantic cannot build a schema for
        return typing.Any
    return hint


def check_provider_config(
    cls: type, feature: str, provider: str, config: Mapping[str, object], *, deep: bool = True
) -> None:
    """Refuse a config with an unknown option (naming the closest one), a missing required one, or a
    value of the wrong type, before the provider is built; a provider's extra keywords pass.

    A provider that lists what it passes on (`request_parameters()`, e.g. the OpenAI SDK's arguments)
    has every key checked against that list too; `deep=False` skips asking it (it may import an SDK)."""
    model, open_ended = provider_options(cls)
    passed_on = _request_parameters(cls) if deep and open_ended else None
    if passed_on is not None:
        open_ended = False
    known = [name for name in model.model_fields] + sorted(passed_on or ())
    where = f"provide_settings.{feature}.config of provider '{provider}'"
    for key in config:
        if key in model.model_fields or (passed_on is not None and key in passed_on):
            continue
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=TYPO_RATIO if open_ended else 0.75)
        if open_ended and not close:
            continue  # passed on (an LLM's request parameter, a client option)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        own = ", ".join(model.model_fields) or "none"
        also = f" (and the {len(passed_on)} parameters it passes on to its SDK)" if passed_on else ""
        raise UnknownOptionError(f"{where}: unknown option '{key}'.{hint} Its options: {own}{also}.")
    try:
        model.model_validate(dict(config))
    except ValidationError as exc:
        problems = [error for error in exc.errors() if error["type"] != "missing"]
        if problems:
            raise UnknownOptionError(describe_errors(problems, where)) from None
