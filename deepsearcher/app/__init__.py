"""The application core under the CLI, the REST API and MCP: the built components, passed as one object."""

from deepsearcher.app.components import Components

__all__ = ["Components"]
