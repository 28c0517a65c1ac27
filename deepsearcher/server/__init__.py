"""DeepSearcher over HTTP: `deepsearcher serve`, or `create_app(config)` for any ASGI server.

Needs the `server` extra: pip install 'deepsearcher[server]'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepsearcher.server.settings import ServerSettings, check_bind_allowed

if TYPE_CHECKING:
    from fastapi import FastAPI

    from deepsearcher.config import Configuration

__all__ = ["ServerSettings", "check_bind_allowed", "create_app"]


def create_app(config: Configuration | None = None) -> FastAPI:
    from deepsearcher.server.app import create_app as build

    return build(config)
