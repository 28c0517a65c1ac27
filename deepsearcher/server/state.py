"""What the routes share, kept apart from the app so routes and services need not import it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deepsearcher.app.components import ComponentBuilder, Components
from deepsearcher.config import Configuration
from deepsearcher.server.auth import warn_weak_keys
from deepsearcher.server.jobs import JobManager
from deepsearcher.server.settings import ServerSettings
from deepsearcher.server.throttle import KeyGuessThrottle
from deepsearcher.types.errors import NotReadyError

__all__ = ["ServerState"]


@dataclass
class ServerState:
    """What the routes share, at `app.state.deepsearcher`: the app's own components among it.

    `components` is one reference: `/set-provider-config/` builds a new `Components` with the
    app's `builder` (reusing unchanged parts) and swaps it, so a request that started before
    the switch finishes with the parts it began with. Two apps in one process share nothing.
    """

    config: Configuration
    settings: ServerSettings
    jobs: JobManager | None = None
    ready: bool = False
    components: Components | None = None
    builder: ComponentBuilder = field(default_factory=ComponentBuilder)
    throttle: KeyGuessThrottle = field(init=False)
    #: The last query's LLM failure (None after a query whose LLM calls worked), shown by /health.
    llm_error: str | None = None

    def __post_init__(self) -> None:
        self.throttle = KeyGuessThrottle(max_failures=self.settings.max_key_failures)
        warn_weak_keys(self.settings)

    def current(self) -> Components:
        """The components requests use now."""
        if self.components is None:
            raise NotReadyError("The server is still starting.")
        return self.components

    def build(self, config: Configuration) -> Components:
        """Components for `config` (blocking: a model may load); the caller swaps them in."""
        return self.builder.build(config)

    def job_manager(self) -> JobManager:
        if self.jobs is None:
            raise NotReadyError("The server is still starting.")
        return self.jobs

    def upload_dir(self) -> Path:
        return self.settings.resolved_data_dir() / "uploads"
