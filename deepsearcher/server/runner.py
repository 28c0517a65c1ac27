"""Run the app with uvicorn in a background thread: for tests, benchmarks and notebooks.

with ServerThread(create_app(config)) as server:
    httpx.get(server.url + "/health")
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI


class ServerThread:
    """uvicorn serving `app` on `host` (a free port unless given) in a daemon thread."""

    def __init__(
        self,
        app: FastAPI,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        startup_timeout: float = 120.0,
    ) -> None:
        import uvicorn

        from deepsearcher.server.protocol import uvicorn_options

        self.config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            lifespan="on",
            timeout_graceful_shutdown=10,
            **uvicorn_options(app),
        )
        self.server = uvicorn.Server(self.config)
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self._thread: threading.Thread | None = None

    @property
    def app(self) -> Any:
        """The application being served (its components are on `app.state.deepsearcher`)."""
        return self.config.app

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        self._thread = threading.Thread(target=self.server.run, name="deepsearcher-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("The DeepSearcher server did not start; see the log above for the reason.")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"The DeepSearcher server did not start within {self.startup_timeout:.0f} s.")
            time.sleep(0.02)
        sockets = [sock for server in self.server.servers for sock in server.sockets]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self.server.should_exit = True
        self._thread.join(30)
        self._thread = None

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
