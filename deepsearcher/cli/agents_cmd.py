"""`deepsearcher agents`: the registered agents and the options each takes (from its schema)."""

from __future__ import annotations

from rich.table import Table

from deepsearcher.cli.common import ConfigOption, JsonOption, console, handle_errors, print_json
from deepsearcher.types.json import JSONObject


def _bounds(schema: JSONObject) -> str:
    parts = []
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in schema:
            parts.append(f"{sign} {schema[key]}")
    return ", ".join(parts)


def _default_agent(config: ConfigOption) -> str:
    """The agent `query` uses without --agent under this config (query_settings.agent, else auto)."""
    from deepsearcher.agent.catalog import check_agent
    from deepsearcher.config import Configuration
    from deepsearcher.types.errors import ConfigurationError

    with handle_errors():
        configured = Configuration(config).query_settings.get("agent")
        return check_agent(str(configured), "query_settings.agent", ConfigurationError) if configured else "auto"
    raise AssertionError("not reached: handle_errors exits")


def agents(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """List the agents `query --agent` takes and their options (`query -o NAME=VALUE`)."""
    from deepsearcher.agent.catalog import agent_infos

    default = _default_agent(config)
    infos = agent_infos()
    if as_json:
        print_json([{**info.to_dict(), "default": info.name == default} for info in infos])
        return
    for info in infos:
        marker = "  [green](default)[/]" if info.name == default else ""
        console.print(f"[bold]{info.name}[/]  {info.label}{marker}", highlight=False)
        console.print(f"  {info.description}", highlight=False, markup=False)
        table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
        for column in ("option", "type", "default", "bounds", "what"):
            table.add_column(column, style="dim" if column == "what" else None)
        for name, schema in info.options.items():
            table.add_row(
                name,
                str(schema.get("type", "")),
                str(schema.get("default", "")),
                _bounds(schema),
                str(schema.get("description", "")),
            )
        console.print(table)
        console.print()
