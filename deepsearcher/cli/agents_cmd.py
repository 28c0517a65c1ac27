"""`deepsearcher agents`: the registered agents and the options each takes (from its schema)."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from deepsearcher.cli.common import JsonOption, console, print_json


def _bounds(schema: dict[str, Any]) -> str:
    parts = []
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in schema:
            parts.append(f"{sign} {schema[key]}")
    return ", ".join(parts)


def agents(as_json: JsonOption = False) -> None:
    """List the agents `query --agent` takes and their options (`query -o NAME=VALUE`)."""
    from deepsearcher.agent.catalog import agent_infos

    infos = agent_infos()
    if as_json:
        print_json([info.to_dict() for info in infos])
        return
    for info in infos:
        console.print(f"[bold]{info.name}[/]  {info.label}", highlight=False)
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
