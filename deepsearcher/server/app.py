"""The FastAPI application: `create_app(config)` builds it; components are built once at startup.

Routes: DeepSearcher's own (`/load-files/`, `/load-website/`, `/query/`, see
routes_compat) and the v1 API (`/v1/...`, see routes_v1); `/health`, OpenAPI docs at
`/docs`, and the web page at `/` when `deepsearcher/server/static/index.html` exists.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

import deepsearcher
from deepsearcher.config import Configuration
from deepsearcher.server.errors import install_error_handlers
from deepsearcher.server.jobs import JobManager
from deepsearcher.server.limits import BodyLimit
from deepsearcher.server.security import OriginGuard, SecurityHeaders, configured_secrets
from deepsearcher.server.settings import ServerSettings
from deepsearcher.server.state import ServerState
from deepsearcher.utils import redaction

if TYPE_CHECKING:
    from deepsearcher.server.watching import ServerWatches

logger = logging.getLogger("deepsearcher.server")

STATIC_DIR = Path(__file__).with_name("static")
#: Swagger UI and ReDoc served from this mount, out of an installed package: `/docs` works offline.
DOCS_ASSETS = "/docs-assets"


def _docs_assets_dir() -> Path:
    """Swagger UI's and ReDoc's files as the fastapi-offline package ships them (a core dependency)."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).with_name("static")


def _install_api_docs(app: FastAPI) -> None:
    """`/docs` (Swagger UI) and `/redoc` with their scripts, styles and icon from this server, never
    a CDN: FastAPI's own pages are blank on a machine without internet access."""
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.responses import HTMLResponse

    app.mount(DOCS_ASSETS, StaticFiles(directory=_docs_assets_dir()), name="docs-assets")
    page: dict[str, Any] = {"openapi_url": app.openapi_url or "/openapi.json", "title": f"{app.title} API"}
    icon = f"{DOCS_ASSETS}/favicon.png"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        script, style = f"{DOCS_ASSETS}/swagger-ui-bundle.js", f"{DOCS_ASSETS}/swagger-ui.css"
        return get_swagger_ui_html(**page, swagger_js_url=script, swagger_css_url=style, swagger_favicon_url=icon)

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        script = f"{DOCS_ASSETS}/redoc.standalone.js"
        return get_redoc_html(**page, redoc_js_url=script, redoc_favicon_url=icon, with_google_fonts=False)


def _stop_jobs_on_sigterm(jobs: JobManager) -> None:
    """Chain onto uvicorn's SIGTERM handler: a running job stops at its next batch boundary
    at once, instead of after uvicorn's graceful wait for open requests."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # ServerThread (tests): uvicorn installs no handlers there
    previous = signal.getsignal(signal.SIGTERM)

    def handler(signum: int, frame: FrameType | None) -> None:
        jobs.begin_shutdown()
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, handler)


def _start_watches(state: ServerState) -> ServerWatches | None:
    """Follow the folders of `load_settings.watch`, if any (each batch of changes runs as a job)."""
    from deepsearcher.server.watching import ServerWatches, watch_entries

    entries = watch_entries(state.current().load_settings)
    if not entries:
        return None
    watches = ServerWatches(state, entries)
    watches.start()
    return watches


def create_app(config: Configuration | None = None) -> FastAPI:
    """The application for `config` (default: the built-in defaults).

    The `server:` section is validated here, so a bad key fails before anything binds;
    the components (embedding model, store, LLM, crawler) are built when the app starts and
    belong to this app (on `app.state.deepsearcher`): two apps in one process share nothing.
    """
    config = config if config is not None else Configuration()
    state = ServerState(config=config, settings=ServerSettings.from_config(config))
    redaction.install()  # every log line of the process, uvicorn's access log included
    redaction.register_secrets(configured_secrets(config, state.settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if state.components is None:  # `deepsearcher serve` builds them before binding, to fail in one line
            state.components = await asyncio.to_thread(state.build, state.config)
        state.jobs = JobManager(
            workers=state.settings.job_workers,
            db_path=state.settings.resolved_data_dir() / "jobs.sqlite",
        )
        _stop_jobs_on_sigterm(state.jobs)
        watches = _start_watches(state)
        state.ready = True
        if state.components.llm is None:
            logger.warning(
                "No LLM available, /v1/query and /query/ answer 503: %s",
                state.components.llm_error,
            )
        try:
            yield
        finally:
            state.ready = False
            if watches is not None:
                await asyncio.to_thread(watches.stop)
            await asyncio.to_thread(state.jobs.shutdown)
            await asyncio.to_thread(state.builder.close)

    app = FastAPI(
        title="DeepSearcher",
        version=deepsearcher.__version__,
        description="Load documents and web pages into a vector store, then ask questions that agents "
        "research with citations.",
        lifespan=lifespan,
        docs_url=None,  # served by _install_api_docs, offline
        redoc_url=None,
    )
    _install_api_docs(app)
    app.state.deepsearcher = state
    install_error_handlers(app)
    app.add_middleware(BodyLimit, limit=state.settings.max_request_bytes)
    app.add_middleware(OriginGuard, settings=state.settings)  # a foreign page gets nothing else
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, refusals included

    from deepsearcher.server.routes_compat import router as compat_router
    from deepsearcher.server.routes_v1 import router as v1_router

    app.include_router(compat_router)
    app.include_router(v1_router)

    @app.get("/health", tags=["meta"], summary="Liveness and readiness (no API key needed).")
    async def health() -> dict[str, Any]:
        from deepsearcher.agent.catalog import agent_infos

        components = state.components
        return {
            "status": "ok" if state.ready else "starting",
            "version": deepsearcher.__version__,
            "llm": components.llm is not None if state.ready and components is not None else None,
            "llm_provider": (state.config.provide_settings.get("llm") or {}).get("provider"),
            "llm_error": state.llm_error,
            "auth": state.settings.auth_enabled,
            "agents": [info.to_dict() for info in agent_infos()],
            "default_agent": state.config.query_settings.get("agent") or "auto",
        }

    @app.get("/", include_in_schema=False)
    async def index() -> Any:
        page = STATIC_DIR / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html")
        return JSONResponse(
            {
                "name": "DeepSearcher",
                "version": deepsearcher.__version__,
                "docs": "/docs",
                "health": "/health",
            }
        )

    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
