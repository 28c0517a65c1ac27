"""`deepsearcher providers`: every registered provider, whether it can run here, and what it needs."""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from deepsearcher.cli.common import (
    ConfigOption,
    JsonOption,
    console,
    handle_errors,
    print_json,
)
from deepsearcher.config.registry import ProviderInfo, ProviderRegistry
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from pathlib import Path

FEATURES = ("llm", "embedding", "file_loader", "web_crawler", "vector_db", "web_search")


def registries() -> dict[str, ProviderRegistry]:
    """The registry of each feature, the same ones the composition root builds from."""
    from deepsearcher.app.components import registries as _registries

    return _registries()


def _importable(module: str) -> bool:
    """Installed or not, found without importing it: torch alone takes seconds to import."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def describe(feature: str, info: ProviderInfo, configured: str | None) -> JSONObject:
    """What the command shows about one provider."""
    missing = [module for module in info.requires if not _importable(module)]
    env_var = info.env_var
    return {
        "feature": feature,
        "name": info.name,
        "aliases": list(info.aliases),
        "extra": info.extra,
        "requires": list(info.requires),
        "installed": not missing,
        "missing": missing,
        "install": f"pip install 'deepsearcher[{info.extra}]'" if missing and info.extra else None,
        "env_var": env_var,
        "env_set": bool(os.environ.get(env_var, "").strip()) if env_var else None,
        "configured": configured is not None and configured in (info.name, *info.aliases),
        "source": info.source,
    }


def collect(configured: dict[str, str | None] | None = None) -> list[dict[str, Any]]:
    """One row per registered provider of every feature, in feature then name order."""
    configured = configured or {}
    rows: list[dict[str, Any]] = []
    for feature, registry in registries().items():
        for info in registry.infos():
            rows.append(describe(feature, info, configured.get(feature)))
    return rows


def _configured_providers(config: Path | None) -> dict[str, str | None]:
    from deepsearcher.config import Configuration

    settings = Configuration(config).provide_settings
    return {feature: (settings.get(feature) or {}).get("provider") for feature in FEATURES}


def providers(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """List every provider per feature: installed or not, the env var it needs and whether it is set."""
    with handle_errors():
        rows = collect(_configured_providers(config))
    if as_json:
        print_json(rows)
        return
    for feature in FEATURES:
        feature_rows = [row for row in rows if row["feature"] == feature]
        if not feature_rows:
            continue
        table = Table(title=feature, title_justify="left", show_edge=False)
        for column in ("provider", "installed", "env var", "set"):
            table.add_column(column)
        for row in feature_rows:
            name = escape(row["name"]) + (" [bold](configured)[/]" if row["configured"] else "")
            if row["installed"]:
                installed = "[green]yes[/]"
            else:
                installed = f"[red]no[/] ({escape(row['install'] or 'missing ' + ', '.join(row['missing']))})"
            if row["env_var"]:
                env_set = "[green]set[/]" if row["env_set"] else "[yellow]not set[/]"
            else:
                env_set = "-"
            table.add_row(name, installed, row["env_var"] or "-", env_set)
        console.print(table)
        console.print()
