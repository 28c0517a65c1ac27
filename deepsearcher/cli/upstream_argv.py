"""DeepSearcher's command-line forms, rewritten into ours before typer parses them.

DeepSearcher (argparse) spells options with underscores (`--collection_name`,
`--max_iter`), takes `--force_new_collection True`, and its users put `--config` before
the subcommand. Ours are typer options with hyphens, flags without values, and a
per-command `--config`. `normalize` maps one onto the other using typer's command tree
itself (so it cannot drift from the real options; duck-typed, since typer vendors its
own click):

- `--foo_bar` / `--foo_bar=v` become `--foo-bar` when the command has that option;
- a flag followed by True/False/yes/no/1/0 (or `--flag=False`) is that boolean: the
  value is consumed, never taken as a path;
- `--config FILE` (or `-c`) given before the subcommand moves after it;
- the removed `--query` / `--load` forms print DeepSearcher's hint and exit 1.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

TRUE_WORDS = frozenset({"true", "yes", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "0", "off"})
CONFIG_OPTIONS = ("--config", "-c")

DEPRECATION_HINT = (
    "[Deprecated] The use of '--query' and '--load' is deprecated.\n"
    "Please use:\n"
    "  deepsearcher query <your_query> --max_iter 3\n"
    "  deepsearcher load <your_local_path_or_url> --collection_name <your_collection_name> "
    "--collection_desc <your_collection_description>"
)


class UpstreamArgvError(SystemExit):
    """Exit after a message on stderr: 1 for the removed `--query` / `--load` forms, 2 for misuse."""

    def __init__(self, message: str, code: int) -> None:
        print(message, file=sys.stderr)
        super().__init__(code)


def _split_global(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(options before the subcommand, --config tokens found there, the rest from the subcommand on)."""
    before: list[str] = []
    config: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in CONFIG_OPTIONS and index + 1 < len(argv):
            config += ["--config", argv[index + 1]]
            index += 2
            continue
        if token.startswith("--config="):
            config += ["--config", token.split("=", 1)[1]]
            index += 1
            continue
        if not token.startswith("-") or token == "--":
            break
        before.append(token)
        index += 1
    return before, config, argv[index:]


def _command_path(rest: list[str], group: object) -> tuple[list[str], Any, list[str]]:
    """(the subcommand names, the command they reach, its arguments); walks nested groups."""
    path: list[str] = []
    command: Any = group
    args = list(rest)
    while hasattr(command, "commands") and args and not args[0].startswith("-"):
        sub = command.commands.get(args[0])
        if sub is None:
            break
        path.append(args.pop(0))
        command = sub
    return path, (command if path else None), args


def _options(command: Any) -> tuple[dict[str, Any], set[str]]:
    """Every option string of `command` → its option, and the option strings that are flags."""
    by_name: dict[str, Any] = {}
    flags: set[str] = set()
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option":
            for name in (*param.opts, *param.secondary_opts):
                by_name[name] = param
                if param.is_flag and not param.count:
                    flags.add(name)
    return by_name, flags


def _rewrite(args: list[str], command: object) -> list[str]:
    known, flags = _options(command)
    out: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            out += args[index - 1 :]
            break
        if not token.startswith("--"):
            out.append(token)
            continue
        name, eq, value = token.partition("=")
        hyphenated = name.replace("_", "-")
        if name not in known and hyphenated in known:
            name = hyphenated
        if name in flags:
            word = value if eq else (args[index] if index < len(args) else "")
            if word.lower() in TRUE_WORDS | FALSE_WORDS:
                index += 0 if eq else 1
                if word.lower() in TRUE_WORDS:
                    out.append(name)
                else:
                    secondary = known[name].secondary_opts
                    out += [secondary[0]] if secondary else []
                continue
            if eq:
                raise UpstreamArgvError(
                    f"Error: {name} is a flag: give it alone, or followed by True or False (got {value!r}).",
                    2,
                )
            out.append(name)
            continue
        out.append(f"{name}={value}" if eq else name)
    return out


def normalize(argv: list[str], group: object) -> list[str]:
    """`argv` (without the program name) in our form; see the module docstring."""
    if "--query" in argv or "--load" in argv:
        raise UpstreamArgvError(DEPRECATION_HINT, 1)
    before, config, rest = _split_global(argv)
    path, command, args = _command_path(rest, group)
    if command is None:
        return before + config + rest  # no known subcommand: let typer report it
    args = _rewrite(args, command)
    return before + path + config + args


class CompatTyper(typer.Typer):
    """A Typer whose console entry point accepts DeepSearcher's forms too (tests calling
    `CliRunner().invoke(app, args)` bypass this and see our forms only)."""

    def __call__(self, *args: object, **kwargs: object) -> Any:
        if not args and "args" not in kwargs:
            kwargs["args"] = normalize(sys.argv[1:], typer.main.get_command(self))
            kwargs.setdefault("prog_name", "deepsearcher")
        return super().__call__(*args, **kwargs)
