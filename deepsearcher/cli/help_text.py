"""Help text in the user's words, not Python's.

Typer 0.2x prints each parameter's Python type (`<list[str]>`, `<bool>` on a flag) and the
usage line's required arguments in braces (`{inputs}...`). A user reads neither: here a value
is TEXT, INTEGER, NUMBER or PATH, a flag shows no type, and the usage line reads `INPUTS...`.
`install()` changes how Typer's parameters describe themselves in this process (the CLI's);
nothing is changed when Typer has no such methods (older versions never printed types).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["install", "plain_type"]

_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "NUMBER",
    "integer": "INTEGER",
    "bool": None,
}


def plain_type(label: str | None) -> str | None:
    """`<list[str]>` → TEXT, `<int>` → INTEGER, `<bool>` → None; choices (`<a|b>`) stay as `a|b`."""
    if label is None:
        return None
    inner = label.strip()
    if inner.startswith("<") and inner.endswith(">"):
        inner = inner[1:-1]
    inner = re.sub(r"^list\[(.*)\]$", r"\1", inner)
    inner = re.sub(r" range$", "", inner)  # the range itself is printed beside it
    if inner in _WORDS:
        return _WORDS[inner]
    if inner in ("path", "file", "directory", "dir"):
        return "PATH"
    return inner


def install() -> None:
    """Plain type names in every command's help, and `NAME...` instead of `{name}...` in usage."""
    try:
        from typer.core import TyperArgument, TyperOption, _TyperParameter
    except ImportError:
        return
    original = getattr(_TyperParameter, "display_type", None)
    if original is None or getattr(original, "_deepsearcher_plain", False):
        return

    def display_type(self: object, ctx: object) -> str | None:
        if isinstance(self, TyperOption) and getattr(self, "is_bool_flag", False):
            return None
        return plain_type(original(self, ctx))

    display_type._deepsearcher_plain = True  # type: ignore[attr-defined]
    _TyperParameter.display_type = display_type  # type: ignore[method-assign,assignment]
    if hasattr(TyperArgument, "_usage_display_name"):

        def usage_name(self: Any) -> str:
            name = self.display_name_raw.upper()
            name = name if self.required else f"[{name}]"
            return name + ("..." if self.nargs != 1 else "")

        TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
