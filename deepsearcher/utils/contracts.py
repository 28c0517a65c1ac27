"""Abstract bases that accept either of two shapes of subclass.

DeepSearcher users wrote their own stores, embeddings and crawlers against upstream's
small bases (a store: `init_collection / insert_data / search_data / clear_db`). Ours
ask our own providers for a richer set of hooks. A base built on `ContractMeta` decides,
per subclass, which methods are still missing (`__missing_methods__`), so both shapes
can be instantiated and a class that is neither is refused at instantiation with
Python's usual "Can't instantiate abstract class ... with abstract methods ..." message.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABCMeta
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class ContractMeta(ABCMeta):
    """ABCMeta whose abstract set also holds what `cls.__missing_methods__()` names.

    The class that defines `__missing_methods__` is the contract's base (`cls._contract_base`):
    what a subclass `overrides` is judged against it."""

    _contract_base: type

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> Any:
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        if "__missing_methods__" in namespace:
            cls._contract_base = cls
        missing = getattr(cls, "__missing_methods__", None)
        if missing is not None:
            cls.__abstractmethods__ = frozenset(set(cls.__abstractmethods__) | set(missing()))
        return cls


def overrides(cls: type, base: type, name: str) -> bool:
    """Whether `cls` provides `name` itself rather than inheriting `base`'s."""
    return getattr(cls, name, None) is not getattr(base, name, None)


def accepts_any_keyword(function: Callable[..., object]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume it takes what it is given
        return True
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def drop_unknown_keywords(function: Callable[..., T]) -> Callable[..., T]:
    """`function`, called with only the keywords its signature names.

    Our callers pass keywords upstream's methods never had (a store's `search_data` gets
    `query_text=`); a user's method written for upstream, without `**kwargs`, would raise
    TypeError on them. The keywords dropped are always ours, never the user's."""
    if accepts_any_keyword(function):
        return function
    names = set(inspect.signature(function).parameters)

    @functools.wraps(function)
    def call(*args: object, **kwargs: object) -> T:
        return function(*args, **{key: value for key, value in kwargs.items() if key in names})

    return call


#: Shapes attached per contract ("llm", "agent"): how a base adapts code written against
#: upstream DeepSearcher's contract, registered by the shim modules (`llm/_upstream.py`,
#: `agent/_upstream.py`) so that the base modules never import them.
_ATTACHED: dict[str, list[object]] = {}


def attach_shape(contract: str, shape: object) -> None:
    """Register `shape` for `contract` (once per shape class: a reloaded shim replaces its own)."""
    shapes = _ATTACHED.setdefault(contract, [])
    shapes[:] = [known for known in shapes if type(known) is not type(shape)]
    shapes.append(shape)


def attached_shapes(contract: str) -> tuple[object, ...]:
    """The shapes attached for `contract`, in attachment order (none: the base's own contract only)."""
    return tuple(_ATTACHED.get(contract, ()))


def is_own(bound: object, ours: object) -> bool:
    """Whether the bound method `bound` is our implementation `ours` (not a user's override,
    nor a replacement set on the instance, such as a test's mock)."""
    return getattr(bound, "__func__", None) is ours
