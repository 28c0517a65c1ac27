"""The ingestion pipeline (sources → chunks → embeddings → store) and, under this old name,
DeepSearcher's `load_from_local_files` / `load_from_website` API.

The pipeline lives in the submodules (`pipeline`, `sources`, `summary`, ...). DeepSearcher's
functions live in `deepsearcher.compat.offline_loading` and are reached here lazily, so the
package's own modules never import the compatibility layer.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from deepsearcher.compat import offline_loading

    try:
        return getattr(offline_loading, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
