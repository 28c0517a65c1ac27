"""What the routes share, kept apart from the app so routes and services need not import it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deepsearcher.app import Components
from deepsearcher.config import Configuration
from deepsearcher.server.jobs import JobManager
from deepsearcher.server.settings import ServerSettings
from deepsearcher.types.errors import NotReadyError

__all__ = ["ServerState"]


@dataclass
class ServerState:
    """What the routes share, at `app.state.deepsearcher`."""

    config: Configuration
    settings: ServerSettings
    jobs: JobManager | None = None
    ready: bool = False
    #: What the app was started with; requests read `services.components()` (the current one).
    components: Components | None = None
    #: The last query's LLM failure (None after a query whose LLM calls worked), shown by /health.
    llm_error: str | None = None

    def job_manager(self) -> JobManager:
        if self.jobs is None:
            raise NotReadyError("The server is still starting.")
        return self.jobs

    def upload_dir(self) -> Path:
        return self.settings.resolved_data_dir() / "uploads"
