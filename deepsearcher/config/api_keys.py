"""Where a provider's API key comes from: its config, else its environment variables."""

from __future__ import annotations

import os
from collections.abc import Iterable

from deepsearcher.types.errors import MissingAPIKeyError


def resolve_api_key(
    provider: str,
    explicit: str | None,
    env_vars: Iterable[str | None],
    *,
    section: str = "llm",
    required: bool = True,
    extra_hint: str = "",
    message: str | None = None,
) -> str | None:
    """`explicit`, else the first of `env_vars` that is set (both stripped of white space).

    When neither gives a key: MissingAPIKeyError naming the first variable and
    `provide_settings.<section>.config.api_key` (or `message`) if `required`, else None.
    """
    names = [name for name in env_vars if name]
    if explicit and str(explicit).strip():
        return str(explicit).strip()
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if required:
        raise MissingAPIKeyError(
            provider,
            names[0] if names else None,
            extra_hint,
            section=section,
            message=message,
        )
    return None
