"""DeepSearcher-style YAML configuration with defaults, ${ENV} expansion and validation."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deepsearcher.types.errors import ConfigurationError

#: A settings section as read from YAML: its values are whatever the file holds, checked by their users.
Settings = dict[str, Any]

FEATURES = ("llm", "embedding", "file_loader", "web_crawler", "vector_db", "web_search")
TOP_LEVEL_KEYS = ("provide_settings", "query_settings", "load_settings", "server", "web")
#: The per-file parse budget (`loader.file_loader._budget.ParseBudget`, whose fields these are).
BUDGET_KEYS = (
    "max_parse_seconds",
    "max_file_bytes",
    "max_inflated_bytes",
    "max_records",
    "max_text_chars",
    "max_parse_memory_mb",
)
#: A load's defaults, here and nowhere else (LoadSettings; the pipeline and the web cache import them).
DEFAULT_CHUNK_OVERLAP = 100
DEFAULT_BATCH_SIZE = 256
DEFAULT_WINDOW_SIZE = 300


class WatchFolder(BaseModel):
    """One folder of `load_settings.watch` given as a mapping (a plain path is the short form)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    collection: str | None = None


class LoadSettings(BaseModel):
    """`load_settings`, typed and checked once: how files are split, embedded and parsed.

    Every default of a load lives here (`chunk_size` None: what fits the embedding model's window,
    `BaseEmbedding.default_chunk_size`); a budget key left None keeps ParseBudget's default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_size: int | None = Field(default=None, ge=1, strict=True)
    chunk_overlap: int = Field(default=DEFAULT_CHUNK_OVERLAP, ge=0, strict=True)
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1, strict=True)
    window_size: int = Field(default=DEFAULT_WINDOW_SIZE, ge=0, strict=True)
    text_extensions: list[str] = Field(default_factory=list)
    watch: list[str | WatchFolder] | None = None
    max_parse_seconds: float | None = Field(default=None, gt=0)
    max_file_bytes: int | float | None = Field(default=None, gt=0)
    max_inflated_bytes: int | float | None = Field(default=None, gt=0)
    max_records: int | float | None = Field(default=None, gt=0)
    max_text_chars: int | float | None = Field(default=None, gt=0)
    max_parse_memory_mb: int | float | None = Field(default=None, ge=0)

    @field_validator(*BUDGET_KEYS, mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        if isinstance(value, bool) or (value is not None and not isinstance(value, int | float)):
            raise ValueError("must be a positive number")
        return value

    @field_validator("text_extensions")
    @classmethod
    def _extensions(cls, value: list[str]) -> list[str]:
        if not all(item.strip(". ") for item in value):
            raise ValueError("must be a list of file extensions such as [py, cfg]")
        return value

    @field_validator("watch")
    @classmethod
    def _folders(cls, value: list[str | WatchFolder] | None) -> list[str | WatchFolder] | None:
        for entry in value or []:
            if not (entry if isinstance(entry, str) else entry.path).strip():
                raise ValueError("must be a list of folders, each a path or a mapping with 'path' and 'collection'")
        return value

    @classmethod
    def of(cls, section: Mapping[str, object] | None, where: str = "") -> LoadSettings:
        """The checked settings of a `load_settings` mapping; ConfigurationError naming the key."""
        try:
            return cls.model_validate(dict(section or {}))
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(part) for part in error["loc"][:1])
            value = (section or {}).get(key)
            reason = str(error["msg"]).removeprefix("Value error, ")
            raise ConfigurationError(f"'load_settings.{key}'{where}: {reason}, got {value!r}.") from None

    def budget(self) -> dict[str, float]:
        """The per-file budget keys that are set (ParseBudget.from_settings takes them)."""
        return {key: value for key in BUDGET_KEYS if (value := getattr(self, key)) is not None}


LOAD_KEYS = tuple(LoadSettings.model_fields)
#: The defaults `load_settings` shows as plain keys, as DeepSearcher's config file had them.
_READ_DEFAULTS = LoadSettings().model_dump(include={"chunk_overlap", "batch_size"})
_ENV_PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def default_config_path() -> Path:
    return Path(__file__).with_name("default_config.yaml")


def expand_env(value: Any, where: str = "") -> Any:
    """Replace ${VAR} and ${VAR:-default} in every string of a nested structure.

    An unset ${VAR} without a default is an error naming it and the key: read as "",
    `uri: "${DATA}/milvus.db"` would quietly become `/milvus.db` at the filesystem root.
    `${VAR:-default}` takes the default when VAR is unset or empty, as in a shell."""
    if isinstance(value, str):
        return _ENV_PATTERN.sub(lambda match: _variable(match, where), value)
    if isinstance(value, dict):
        return {key: expand_env(item, f"{where}.{key}" if where else str(key)) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_env(item, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def _variable(match: re.Match[str], where: str) -> str:
    name, default = match.group(1), match.group(2)
    value = os.environ.get(name)
    if value or (value is not None and default is None):
        return value
    if default is not None:
        return default
    place = f" in '{where}'" if where else ""
    raise ConfigurationError(
        f"The environment variable {name}{place} is not set. Set it, or write ${{{name}:-default}} to give a default."
    )


#: A config file is a few KB; anything this big is the wrong file (a log, a data set), refused unread.
MAX_CONFIG_BYTES = 1024 * 1024


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigurationError(
                f"Config file {path} is {size:,} bytes; a config is at most {MAX_CONFIG_BYTES:,}: give the YAML config."
            )
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"Cannot read config file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"Config file {path} is not a text file (byte 0x{exc.object[exc.start]:02x} at offset {exc.start} is not "
            "UTF-8): give the YAML config file, not a binary or another encoding."
        ) from None
    if "\x00" in text:
        raise ConfigurationError(f"Config file {path} is not a text file (it holds NUL bytes): give the YAML file.")
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"Config file {path} is not valid YAML: {exc}") from exc
    except RecursionError:  # PyYAML composes nested nodes recursively
        raise ConfigurationError(
            f"Config file {path} nests its values too deeply (hundreds of levels): write the config's own keys."
        ) from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"Config file {path} must be a mapping at the top level, got {type(data).__name__}.")
    return data


class Configuration:
    """Settings for every feature; `config_path` may override any subset of the defaults."""

    def __init__(self, config_path: str | os.PathLike[str] | None = None) -> None:
        defaults = _read_yaml(default_config_path())
        self.config_path = Path(config_path) if config_path else None
        user = _read_yaml(self.config_path) if self.config_path else {}
        _validate(user, source=str(self.config_path))
        merged = _merge(defaults, user)
        merged = expand_env(merged)
        _validate(merged, source=str(self.config_path or default_config_path()))
        self.provide_settings: dict[str, dict[str, Any]] = merged["provide_settings"]
        self.query_settings: Settings = merged.get("query_settings") or {}
        #: as read (DeepSearcher's users read and change it); `load` is the checked, typed view
        self.load_settings: Settings = {**_READ_DEFAULTS, **(merged.get("load_settings") or {})}
        self.server_settings: dict[str, Any] = merged.get("server", {}) or {}
        #: how a question reaches the web (checked by deepsearcher/agent/web_source.WebSettings)
        self.web_settings: Settings = merged.get("web") or {}

    @property
    def load(self) -> LoadSettings:
        """`load_settings`, checked and typed, with every default filled in."""
        return LoadSettings.of(self.load_settings)

    def load_config_from_yaml(self, config_path: str) -> dict[str, Any]:
        """DeepSearcher-compatible helper: the raw mapping of a YAML file."""
        return _read_yaml(Path(config_path))

    def set_provider_config(self, feature: str, provider: str, provider_configs: Mapping[str, object]) -> None:
        """Switch `feature` to `provider` with exactly `provider_configs`."""
        _check_feature(feature)
        if not isinstance(provider_configs, dict):
            raise ConfigurationError(
                f"provide_settings.{feature}.config must be a mapping, got {type(provider_configs).__name__}."
            )
        self.provide_settings[feature] = {
            "provider": provider,
            "config": expand_env(copy.deepcopy(provider_configs), f"provide_settings.{feature}.config"),
        }

    def get_provider_config(self, feature: str) -> dict[str, Any]:
        """The {provider, config} mapping of `feature`."""
        _check_feature(feature)
        return self.provide_settings[feature]


def _merge(defaults: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `user` over `defaults`; a feature whose provider changes drops the default config."""
    merged = copy.deepcopy(defaults)
    for key, value in user.items():
        if key == "provide_settings" and isinstance(value, dict):
            for feature, setting in value.items():
                base = merged["provide_settings"].get(feature, {})
                setting = setting or {}
                if "provider" in setting and setting["provider"] != base.get("provider"):
                    merged["provide_settings"][feature] = {
                        "provider": setting["provider"],
                        "config": copy.deepcopy(setting.get("config") or {}),
                    }
                else:
                    config = dict(base.get("config") or {})
                    config.update(setting.get("config") or {})
                    merged["provide_settings"][feature] = {
                        "provider": base.get("provider"),
                        "config": config,
                    }
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _check_feature(feature: str) -> None:
    if feature not in FEATURES:
        raise ConfigurationError(f"Unknown feature '{feature}'. Allowed values: {', '.join(FEATURES)}.")


def _validate(data: Mapping[str, object], source: str) -> None:
    where = f" in {source}" if source and source != "None" else ""
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise ConfigurationError(
                f"Unknown top-level key '{key}'{where}. Allowed keys: {', '.join(TOP_LEVEL_KEYS)}."
            )
    provide = data.get("provide_settings", {})
    if not isinstance(provide, dict):
        raise ConfigurationError(f"'provide_settings'{where} must be a mapping of feature → {{provider, config}}.")
    for feature, setting in provide.items():
        _check_feature(feature)
        if setting is None:
            continue
        if not isinstance(setting, dict):
            raise ConfigurationError(
                f"'provide_settings.{feature}'{where} must be a mapping with keys provider, config."
            )
        for sub in setting:
            if sub not in ("provider", "config"):
                raise ConfigurationError(
                    f"Unknown key 'provide_settings.{feature}.{sub}'{where}. Allowed keys: provider, config."
                )
        if "provider" in setting and not isinstance(setting["provider"], str):
            raise ConfigurationError(f"'provide_settings.{feature}.provider'{where} must be a provider name (string).")
        if setting.get("config") is not None and not isinstance(setting["config"], dict):
            raise ConfigurationError(f"'provide_settings.{feature}.config'{where} must be a mapping.")
    # query_settings keys and values are the agents' options: checked against their schemas when the
    # agents are built (deepsearcher/agent/catalog.py check_query_settings), not listed here again
    if data.get("query_settings") is not None and not isinstance(data["query_settings"], dict):
        raise ConfigurationError(f"'query_settings'{where} must be a mapping.")
    _validate_section(data, "load_settings", LOAD_KEYS, where)
    load = data.get("load_settings")
    LoadSettings.of(load if isinstance(load, dict) else None, where)  # a mapping: _validate_section checked
    query = data.get("query_settings")
    query = query if isinstance(query, dict) else {}  # a mapping or None: checked above
    if "agent" in query and not isinstance(query["agent"], str):
        # the name itself is checked against the registered agents when they are built
        raise ConfigurationError(f"'query_settings.agent'{where} must be an agent name, got {query['agent']!r}.")


def _validate_section(data: Mapping[str, object], section: str, allowed: tuple[str, ...], where: str) -> None:
    values = data.get(section)
    if values is None:
        return
    if not isinstance(values, dict):
        raise ConfigurationError(f"'{section}'{where} must be a mapping.")
    for key in values:
        if key not in allowed:
            raise ConfigurationError(f"Unknown key '{section}.{key}'{where}. Allowed keys: {', '.join(allowed)}.")
