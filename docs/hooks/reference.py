"""MkDocs hook: the reference pages, generated from the code at every `make docs` so they cannot drift.

- reference/cli.md: every command and option, read from the Typer app (the same objects `--help` prints);
- reference/configuration.md: every config key with its type, default and bounds, read from the schemas
  that check them (the agents' `Options`, `QueryLimits`, `ParseBudget`, `ServerSettings`, the defaults file);
- reference/providers.md: every registered provider with its extra, environment variable and config options;
- reference/rest-api.md: every route of the server, read from its OpenAPI schema.

The pages exist only in the built site (nothing is written to docs/); `render_all()` gives them to tests.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the checkout's package, whichever directory mkdocs runs from
    sys.path.insert(0, str(ROOT))

GENERATED_NOTE = (
    "*Generated from the code by `docs/hooks/reference.py` at each `make docs`: edit the code, not this page.*"
)


# ----------------------------------------------------------------------------- shared helpers


def _cell(value: object) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened, empty shown as a dash."""
    text = " ".join(str(value).split()) if value not in (None, "") else "–"
    return text.replace("|", "\\|")


def _code(value: object) -> str:
    """A value as config.yaml writes it (`true`, `{"model": "gpt-4o-mini"}`), in backticks."""
    if value is None or value == "":
        return "–"
    if isinstance(value, (dict, list, tuple, bool)):
        value = json.dumps(value, default=str)
    return f"`{value}`"


def _table(headers: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    heads = list(headers)
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return lines + [""]


def _bounds(schema: Mapping[str, Any]) -> str:
    """JSON-schema bounds as a person writes them: `≥ 1, ≤ 20`."""
    signs = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))
    return ", ".join(f"{sign} {_number(schema[key])}" for key, sign in signs if key in schema)


def _number(value: object) -> object:
    """1.0 → 1: FastAPI's schema writes integer bounds as floats."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _schema_type(schema: Mapping[str, Any]) -> str:
    """`integer`, `number or null`, `list of string`... from a JSON schema fragment."""
    if "anyOf" in schema:
        return " or ".join(dict.fromkeys(_schema_type(part) for part in schema["anyOf"]))
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    return str(schema.get("type", "any"))


def _notes(source: str) -> dict[str, str]:
    """`name: value  # note` comment lines of a YAML text (the defaults file, a docstring's example)."""
    found: dict[str, str] = {}
    for match in re.finditer(r"^\s*#?\s*(\w+):[^#\n]*#\s*(.+)$", source, re.MULTILINE):
        found.setdefault(match.group(1), match.group(2).strip())
    return found


def _field_notes(cls: type) -> dict[str, str]:
    """The `#:` comment above each field of a dataclass (its documentation in the source)."""
    notes: dict[str, str] = {}
    pending: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        match = re.match(r"(\w+)\s*:", stripped)
        if match and pending:
            notes[match.group(1)] = " ".join(pending)
        pending = []
    return notes


def _dataclass_default(item: dataclasses.Field[Any]) -> object:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return None


def _type_name(annotation: object) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    return str(text).replace("typing.", "").replace("pathlib.", "")


# ----------------------------------------------------------------------------- CLI


def cli_reference() -> str:
    """Every command, its usage line, arguments and options, as `deepsearcher COMMAND --help` has them."""
    import typer

    from deepsearcher.cli import help_text
    from deepsearcher.cli.main import app

    help_text.install()
    root = typer.main.get_command(app)
    context = root.context_class(root, info_name="deepsearcher")
    lines = ["# Command line", "", GENERATED_NOTE, ""]
    lines += ["Options of `deepsearcher` itself, given before the command:", ""]
    lines += _param_table(root, context)
    for path, command, command_context in _walk(root, context, ("deepsearcher",)):
        usage = " ".join(command.collect_usage_pieces(command_context))
        lines += [f"## {' '.join(path[1:])}", "", inspect.cleandoc(command.help or ""), ""]
        lines += ["```text", f"{' '.join(path)} {usage}", "```", ""]
        lines += _param_table(command, command_context)
    return "\n".join(lines)


def _walk(group: Any, context: Any, path: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], Any, Any]]:
    for name, command in getattr(group, "commands", {}).items():
        if command.hidden:
            continue
        child = command.context_class(command, info_name=name, parent=context)
        if getattr(command, "commands", None):
            yield from _walk(command, child, (*path, name))
        else:
            yield (*path, name), command, child


def _param_table(command: Any, context: Any) -> list[str]:
    rows = []
    for param in command.params:
        if param.hidden or param.name in ("install_completion", "show_completion"):
            continue
        names = ", ".join(f"`{name}`" for name in (*param.opts, *param.secondary_opts))
        if param.param_type_name == "argument":
            names = f"`{param.name.upper()}`" + ("..." if param.nargs != 1 else "")
        value = param.display_type(context)
        default = "" if param.default is None or param.default is False or param.default == () else param.default
        limits = ", ".join(
            f"{sign} {bound}" for sign, bound in (("≥", param.min), ("≤", param.max)) if bound is not None
        )
        notes = [param.help or ""]
        if param.multiple:
            notes.append("(repeatable)")
        if param.required:
            notes.append("(required)")
        if param.envvar:
            notes.append(f"(env: `{param.envvar}`)")
        rows.append((names, value or "flag", _code(default), limits, " ".join(note for note in notes if note)))
    return _table(("name", "value", "default", "bounds", "what"), rows) if rows else []


# ----------------------------------------------------------------------------- configuration


def config_reference() -> str:
    """Every key of config.yaml: its section, type, default, bounds and meaning, from the checking schemas."""
    import yaml

    from deepsearcher.config.settings import TOP_LEVEL_KEYS, default_config_path

    defaults_text = default_config_path().read_text(encoding="utf-8")
    defaults = yaml.safe_load(defaults_text) or {}
    notes = _notes(defaults_text)  # the defaults file's comments say what a key is for
    lines = ["# Configuration", "", GENERATED_NOTE, ""]
    lines += [
        "A `config.yaml` holds only the keys it changes; everything else keeps the defaults below. "
        f"Top-level sections: {', '.join(f'`{key}`' for key in TOP_LEVEL_KEYS)}. Values may use "
        "`${ENV_VAR}` and `${ENV_VAR:-default}`. Give the file with `--config FILE` (any command) or "
        "`DEEPSEARCHER_CONFIG`.",
        "",
    ]
    lines += _provide_section(defaults.get("provide_settings") or {})
    lines += _query_section(notes)
    lines += _load_section(defaults.get("load_settings") or {}, notes)
    lines += _server_section()
    return "\n".join(lines)


def _section(title: str, intro: str) -> list[str]:
    return [f"## {title}", "", intro, ""]


def _provide_section(provide: Mapping[str, Any]) -> list[str]:
    lines = _section(
        "provide_settings",
        "One `provider` and its `config` per feature. The options of each provider are listed in the "
        "[providers reference](providers.md).",
    )
    rows = (
        (f"`{feature}`", _code(spec.get("provider")), _code(spec.get("config") or {}))
        for feature, spec in provide.items()
    )
    return lines + _table(("feature", "default provider", "default config"), rows)


def _query_section(notes: Mapping[str, str]) -> list[str]:
    """The query's own limits (QueryLimits) and every agent's options (their `Options` schemas)."""
    from deepsearcher.agent.catalog import QUERY_LEVEL_KEYS, agent_infos
    from deepsearcher.agent.options import QueryLimits

    lines = _section(
        "query_settings",
        "Defaults of every query; each is also a per-query option "
        "(`deepsearcher query -o NAME=VALUE`, REST's and MCP's `options`).",
    )
    limits = QueryLimits.model_json_schema().get("properties", {})
    rows: list[tuple[object, ...]] = [
        ("`agent`", "string", "`auto`", "a registered agent", "–", notes.get("agent", "The default agent."))
    ]
    for key in QUERY_LEVEL_KEYS:
        if key in limits:
            schema = limits[key]
            default = _code(schema.get("default"))
            rows.append(
                (f"`{key}`", _schema_type(schema), default, _bounds(schema), "every", schema.get("description"))
            )
    options: dict[str, dict[str, Any]] = {}
    for info in agent_infos():
        for name, schema in info.options.items():
            options.setdefault(name, {"schema": schema, "agents": {}})["agents"][info.name] = schema.get("default")
    for name, entry in options.items():
        schema, agents = entry["schema"], entry["agents"]
        per_agent = ", ".join(f"{agent}: {_code(value)}" for agent, value in agents.items() if value is not None)
        row = (_schema_type(schema), per_agent or "–", _bounds(schema), ", ".join(agents), schema.get("description"))
        rows.append((f"`{name}`", *row))
    return lines + _table(("key", "type", "default", "bounds", "agents", "what"), rows)


def _load_section(load_defaults: Mapping[str, Any], notes: Mapping[str, str]) -> list[str]:
    """Split and embed settings (the pipeline's signature) and the per-file budget (ParseBudget's fields)."""
    from deepsearcher.config.settings import LOAD_KEYS
    from deepsearcher.loader.file_loader._budget import ParseBudget
    from deepsearcher.offline_loading.pipeline import IngestionPipeline

    lines = _section(
        "load_settings",
        "How files are split, embedded and parsed. A file over one of the per-file limits is refused by name; "
        "the rest load.",
    )
    budget = {item.name: item for item in dataclasses.fields(ParseBudget)}
    budget_notes = _field_notes(ParseBudget)
    pipeline = inspect.signature(IngestionPipeline.__init__).parameters
    rows = []
    for key in LOAD_KEYS:
        note = budget_notes.get(key) or notes.get(key, "")
        if key in budget:
            item = budget[key]
            bound = "≥ 0" if key == "max_parse_memory_mb" else "> 0"
            rows.append((f"`{key}`", _type_name(item.type), _code(_dataclass_default(item)), bound, note))
        elif key in pipeline:
            parameter = pipeline[key]
            default = load_defaults.get(key, parameter.default)
            bound = "≥ 0" if key in ("chunk_overlap", "window_size") else "≥ 1"
            rows.append((f"`{key}`", _type_name(parameter.annotation), _code(default), bound, note))
        else:
            rows.append((f"`{key}`", "list of string", "`[]`", "–", note))
    return lines + _table(("key", "type", "default", "bounds", "what"), rows)


def _server_section() -> list[str]:
    """ServerSettings' fields, described by their `#:` comments or the module docstring's example."""
    from deepsearcher.server import settings as server_settings

    lines = _section("server", "Read by `deepsearcher serve`.")
    server_notes = {**_notes(server_settings.__doc__ or ""), **_field_notes(server_settings.ServerSettings)}
    rows = [
        (f"`{item.name}`", _type_name(item.type), _code(_dataclass_default(item)), "", server_notes.get(item.name, ""))
        for item in dataclasses.fields(server_settings.ServerSettings)
    ]
    lines += _table(("key", "type", "default", "bounds", "what"), rows)
    keys = ", ".join(f"`{key}`" for key in server_settings.API_KEY_KEYS)
    return lines + [
        f"Each entry of `api_keys` takes {keys}; a key is at least {server_settings.MIN_KEY_LENGTH} characters.",
        "",
    ]


# ----------------------------------------------------------------------------- providers


def providers_reference() -> str:
    """Every built-in provider per feature: what it is, its extra, its key variable and its config options."""
    from deepsearcher.app.components import registries
    from deepsearcher.app.provider_options import provider_options

    lines = ["# Providers", "", GENERATED_NOTE, ""]
    lines += [
        "Pick one per feature in `provide_settings.<feature>.provider`; its `config` takes the options listed. "
        "A provider whose extra is not installed names the `pip install` that adds it; "
        "`deepsearcher providers` shows what is installed and which variables are set on this machine.",
        "",
    ]
    for feature, registry in registries().items():
        infos = [info for info in registry.infos() if info.source == "built-in"]
        lines += [f"## {feature}", ""]
        lines += _table(
            ("provider", "aliases", "extra", "env var", "what"),
            (
                (
                    f"[`{info.name}`](#{_anchor(feature, info.name)})",
                    ", ".join(info.aliases),
                    _code(info.extra),
                    _code(info.env_var),
                    _first_line(info.cls),
                )
                for info in infos
            ),
        )
        for info in infos:
            lines += [f"### {info.name} {{#{_anchor(feature, info.name)}}}", "", _doc(info.cls), ""]
            model, open_ended = provider_options(info.cls)
            properties = model.model_json_schema().get("properties", {})
            required = set(model.model_json_schema().get("required", []))
            if properties:
                lines += _table(
                    ("option", "type", "default", "bounds"),
                    (
                        (
                            f"`{name}`",
                            _schema_type(schema),
                            "required" if name in required else _code(schema.get("default")),
                            _bounds(schema),
                        )
                        for name, schema in properties.items()
                    ),
                )
            if open_ended and feature == "llm":
                lines += ["Other keys are passed to the API as request parameters (`temperature`, `top_p`...).", ""]
    return "\n".join(lines)


def _anchor(feature: str, name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{feature}-{name}".lower()).strip("-")


def _first_line(cls: type) -> str:
    return _doc(cls).split("\n\n")[0].replace("\n", " ")


def _doc(cls: type) -> str:
    """The class's own docstring (not its base's), or its description attribute."""
    return inspect.cleandoc(vars(cls).get("__doc__") or getattr(cls, "__description__", "") or "")


# ----------------------------------------------------------------------------- REST API


def rest_reference() -> str:
    """Every route of `deepsearcher serve`, from the app's OpenAPI schema (what `/docs` shows)."""
    from deepsearcher.server.app import create_app

    schema = create_app().openapi()
    components = schema.get("components", {}).get("schemas", {})
    lines = ["# REST API", "", GENERATED_NOTE, ""]
    lines += [
        f"{schema['info'].get('description', '')} A running server shows the same schema at `/docs` "
        "(Swagger UI, offline) and `/openapi.json`. With `server.api_keys` set, send a key as "
        "`Authorization: Bearer KEY`.",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in schema.get("paths", {}).items():
        for method, operation in methods.items():
            tag = (operation.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((path, method.upper(), operation))
    for tag, operations in by_tag.items():
        lines += [f"## {tag}", ""]
        for path, method, operation in operations:
            lines += [f"### `{method} {path}`", "", operation.get("summary", ""), ""]
            if operation.get("description"):
                lines += [inspect.cleandoc(operation["description"]), ""]
            parameters = operation.get("parameters", [])
            if parameters:
                lines += _table(
                    ("parameter", "in", "type", "required", "what"),
                    (
                        (
                            f"`{p['name']}`",
                            p.get("in"),
                            _schema_type(p.get("schema", {})),
                            "yes" if p.get("required") else "no",
                            p.get("description", ""),
                        )
                        for p in parameters
                    ),
                )
            body = operation.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                lines += [f"Body (`{media}`):", ""]
                lines += _schema_table(content.get("schema", {}), components)
            codes = ", ".join(
                f"{code} {_cell(reply.get('description', ''))}"
                for code, reply in operation.get("responses", {}).items()
            )
            lines += [f"Answers: {codes}.", ""]
    return "\n".join(lines)


def _schema_table(schema: Mapping[str, Any], components: Mapping[str, Any]) -> list[str]:
    if "$ref" in schema:
        schema = components.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    if not properties:
        return [f"`{_schema_type(schema)}`", ""]
    return _table(
        ("field", "type", "default", "bounds", "what"),
        (
            (
                f"`{name}`",
                _schema_type(prop),
                "required" if name in required else _code(prop.get("default")),
                _bounds(prop),
                prop.get("description", ""),
            )
            for name, prop in properties.items()
        ),
    )


# ----------------------------------------------------------------------------- the MkDocs hook

PAGES: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli_reference,
    "reference/configuration.md": config_reference,
    "reference/providers.md": providers_reference,
    "reference/rest-api.md": rest_reference,
}


def render_all() -> dict[str, str]:
    """Each generated page's path (under docs/) and Markdown."""
    return {path: render() for path, render in PAGES.items()}


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site (MkDocs ≥ 1.6 `File.generated`): built, never written to docs/."""
    from mkdocs.structure.files import File

    for path, text in render_all().items():
        files.append(File.generated(config, path, content=text))
    return files
