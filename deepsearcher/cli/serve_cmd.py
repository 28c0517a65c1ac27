"""`deepsearcher serve`: the HTTP API (and web page) with uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from deepsearcher.cli.common import ConfigOption, err_console
from deepsearcher.types.errors import DeepSearcherError


def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Anything but loopback needs server.api_keys in the config.",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.", min=1, max=65535)] = 8000,
    log_level: Annotated[
        str,
        typer.Option(
            "--log-level",
            help="uvicorn log level: critical, error, warning, info, debug.",
        ),
    ] = "info",
    config: ConfigOption = None,
) -> None:
    """Serve the HTTP API: DeepSearcher's /load-files/, /load-website/, /query/ and the /v1 API (docs at /docs)."""
    try:
        from deepsearcher.config import Configuration
        from deepsearcher.server.settings import ServerSettings, check_bind_allowed

        configuration = Configuration(config)
        settings = ServerSettings.from_config(configuration)
        check_bind_allowed(host, settings)
        try:
            import uvicorn

            from deepsearcher.server.app import create_app
        except ImportError as exc:
            raise DeepSearcherError(
                f"The server's packages are part of DeepSearcher but {exc.name} is missing: pip install 'deepsearcher'"
            ) from exc
        app = create_app(configuration)
        # Build the components now, so a store in use or a bad model is one clear line
        # here; the app's startup then uses them.
        state = app.state.deepsearcher
        state.components = state.build(configuration)
    except (DeepSearcherError, OSError) as exc:
        err_console.print(
            f"[bold red]Error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )  # one line, never wrapped
        raise typer.Exit(code=2) from None
    err_console.print(
        f"DeepSearcher API on http://{host}:{port} (docs: "
        f"/docs){'' if settings.auth_enabled else ', no API keys: local access only'}.",
        highlight=False,
        soft_wrap=True,
    )
    from deepsearcher.server.protocol import uvicorn_options

    uvicorn.run(app, host=host, port=port, log_level=log_level.lower(), **uvicorn_options(app))
