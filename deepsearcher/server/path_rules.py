"""The path rules' old home: they now live in the application core (`deepsearcher.app.path_rules`)."""

from deepsearcher.app.path_rules import (
    NO_ROOTS,
    PathRefusedError,
    iter_allowed_file_sources,
    resolve_allowed,
    within,
)

__all__ = [
    "NO_ROOTS",
    "PathRefusedError",
    "iter_allowed_file_sources",
    "resolve_allowed",
    "within",
]
