"""The `server:` section of config.yaml, validated with messages that name the key.

server:
  api_keys:                      # none: the server only listens on loopback
    - key: "${DEEPSEARCHER_ADMIN_KEY}"
    - key: "${DEEPSEARCHER_HR_KEY}"
      collections: [handbook]    # this key sees and changes only these collections
      name: hr                   # shown in the server log instead of the key
  allowed_roots: [/srv/docs]     # server-side paths /load-files/ and /v1/load may read
  max_upload_bytes: 52428800     # per uploaded file (50 MB)
  max_upload_files: 20           # per upload request
  data_dir: /var/lib/deepsearcher  # uploads are staged here while they load
  job_workers: 2                 # load jobs running at once (one per collection at a time)
  max_request_bytes: 1048576     # a JSON request body at most (uploads have their own limits)
  header_timeout: 10             # seconds a client has to send a request's headers
  max_key_failures: 10           # wrong API keys per client per minute before it waits (0: no brake)
  allowed_hosts: [docs.internal] # Host names a keyless server answers besides localhost/127.0.0.1/[::1]
  allowed_origins: []            # other web origins whose pages may POST/DELETE here
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from deepsearcher.types.errors import ConfigurationError
from deepsearcher.types.json import JSONObject
from deepsearcher.vector_db.base import normalize_collection_name

SERVER_KEYS = (
    "api_keys",
    "allowed_roots",
    "max_upload_bytes",
    "max_upload_files",
    "data_dir",
    "job_workers",
    "max_request_bytes",
    "header_timeout",
    "max_key_failures",
    "allowed_hosts",
    "allowed_origins",
    "trusted_proxies",
)
API_KEY_KEYS = ("key", "collections", "name")
DEFAULT_MAX_UPLOAD_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_UPLOAD_FILES = 20
DEFAULT_JOB_WORKERS = 2
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_KEY_FAILURES = 10
MIN_KEY_LENGTH = 8


@dataclass(frozen=True)
class ApiKey:
    """One configured key and the collections it may use (None: all of them)."""

    key: str
    collections: frozenset[str] | None = None
    name: str = ""

    @property
    def label(self) -> str:
        """How logs name the key (never the key itself)."""
        return self.name or f"key …{self.key[-4:]}"


@dataclass
class ServerSettings:
    api_keys: list[ApiKey] = field(default_factory=list)
    allowed_roots: list[Path] = field(default_factory=list)
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    max_upload_files: int = DEFAULT_MAX_UPLOAD_FILES
    data_dir: Path | None = None
    job_workers: int = DEFAULT_JOB_WORKERS
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    #: Seconds a client has to send a request's headers (slow or idle connections are closed after).
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    #: Wrong API keys a client may send within a minute before it must wait (0: no brake).
    max_key_failures: int = DEFAULT_MAX_KEY_FAILURES
    #: Host names a keyless server answers besides its loopback names (a reverse proxy's, say).
    allowed_hosts: list[str] = field(default_factory=list)
    #: Web origins besides the server's own whose pages may change things (POST, DELETE).
    allowed_origins: list[str] = field(default_factory=list)
    #: Addresses / networks of reverse proxies whose X-Forwarded-For names the client (none: never read).
    trusted_proxies: list[str] = field(default_factory=list)

    @property
    def auth_enabled(self) -> bool:
        return bool(self.api_keys)

    def resolved_data_dir(self) -> Path:
        """Where uploads are staged: server.data_dir, or the user's DeepSearcher data directory."""
        if self.data_dir is not None:
            return self.data_dir
        import platformdirs

        return Path(platformdirs.user_data_dir("deepsearcher")) / "server"

    @classmethod
    def from_mapping(cls, values: JSONObject | None) -> ServerSettings:
        """Validate the `server:` mapping; every error names the offending key."""
        values = values or {}
        if not isinstance(values, dict):
            raise ConfigurationError(
                f"'server' must be a mapping with keys {', '.join(SERVER_KEYS)}, got {type(values).__name__}."
            )
        for key in values:
            if key not in SERVER_KEYS:
                raise ConfigurationError(f"Unknown key 'server.{key}'. Allowed keys: {', '.join(SERVER_KEYS)}.")
        settings = cls()
        settings.api_keys = _api_keys(values.get("api_keys"))
        settings.allowed_roots = _roots(values.get("allowed_roots"))
        settings.max_upload_bytes = _positive_int(values, "max_upload_bytes", DEFAULT_MAX_UPLOAD_BYTES)
        settings.max_upload_files = _positive_int(values, "max_upload_files", DEFAULT_MAX_UPLOAD_FILES)
        settings.job_workers = _positive_int(values, "job_workers", DEFAULT_JOB_WORKERS)
        settings.max_request_bytes = _positive_int(values, "max_request_bytes", DEFAULT_MAX_REQUEST_BYTES)
        timeout = values.get("header_timeout", DEFAULT_HEADER_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
            raise ConfigurationError(f"'server.header_timeout' must be seconds between 0 and 3600, got {timeout!r}.")
        settings.header_timeout = float(timeout)
        failures = values.get("max_key_failures", DEFAULT_MAX_KEY_FAILURES)
        if isinstance(failures, bool) or not isinstance(failures, int) or failures < 0:
            raise ConfigurationError(f"'server.max_key_failures' must be an integer >= 0, got {failures!r}.")
        settings.max_key_failures = failures
        settings.allowed_hosts = [host.lower() for host in _strings(values, "allowed_hosts")]
        settings.allowed_origins = [origin.lower().rstrip("/") for origin in _strings(values, "allowed_origins")]
        settings.trusted_proxies = _networks(values, "trusted_proxies")
        data_dir = values.get("data_dir")
        if data_dir is not None:
            if not isinstance(data_dir, str) or not data_dir.strip():
                raise ConfigurationError(f"'server.data_dir' must be a directory path, got {data_dir!r}.")
            settings.data_dir = Path(os.path.expanduser(data_dir)).resolve()
        return settings

    @classmethod
    def from_config(cls, config: object) -> ServerSettings:
        return cls.from_mapping(getattr(config, "server_settings", None) or {})


def _strings(values: JSONObject, key: str) -> list[str]:
    entries = values.get(key) or []
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list) or not all(isinstance(entry, str) and entry.strip() for entry in entries):
        raise ConfigurationError(f"'server.{key}' must be a list of names, got {entries!r}.")
    return [entry.strip() for entry in entries]


def _networks(values: JSONObject, key: str) -> list[str]:
    """IP addresses or networks (CIDR), each checked, so a typo fails at start instead of trusting nobody."""
    import ipaddress

    networks = []
    for entry in _strings(values, key):
        try:
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ConfigurationError(
                f"'server.{key}' entry {entry!r} is not an IP address or network (e.g. 10.0.0.5 or 10.0.0.0/24)."
            ) from None
    return networks


def _positive_int(values: JSONObject, key: str, default: int) -> int:
    value = values.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"'server.{key}' must be a positive integer, got {value!r}.")
    return value


def _api_keys(entries: object) -> list[ApiKey]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ConfigurationError(
            "'server.api_keys' must be a list of {key, collections} mappings, e.g. api_keys: [{key: \"${MY_KEY}\"}]."
        )
    keys: list[ApiKey] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"server.api_keys[{index}]"
        if isinstance(entry, str):
            entry = {"key": entry}
        if not isinstance(entry, dict):
            raise ConfigurationError(f"'{where}' must be a mapping with keys {', '.join(API_KEY_KEYS)}.")
        for key in entry:
            if key not in API_KEY_KEYS:
                raise ConfigurationError(f"Unknown key '{where}.{key}'. Allowed keys: {', '.join(API_KEY_KEYS)}.")
        secret = entry.get("key")
        if not isinstance(secret, str) or not secret.strip():
            raise ConfigurationError(
                f"'{where}.key' is missing or empty (if it comes from ${{ENV_VAR}}, is the variable set?)."
            )
        secret = secret.strip()
        if len(secret) < MIN_KEY_LENGTH:
            raise ConfigurationError(
                f"'{where}.key' is too short: use at least {MIN_KEY_LENGTH} characters (a random token)."
            )
        if secret in seen:
            raise ConfigurationError(f"'{where}.key' repeats an earlier key: each key must be different.")
        seen.add(secret)
        collections = entry.get("collections")
        allowed: frozenset[str] | None = None
        if collections is not None:
            if not isinstance(collections, list) or not collections or not all(isinstance(c, str) for c in collections):
                raise ConfigurationError(
                    f"'{where}.collections' must be a non-empty list of collection names (leave it out for "
                    "all collections)."
                )
            try:
                allowed = frozenset(normalize_collection_name(c) for c in collections)
            except ConfigurationError as exc:
                raise ConfigurationError(f"'{where}.collections': {exc}") from exc
        name = entry.get("name", "")
        if not isinstance(name, str):
            raise ConfigurationError(f"'{where}.name' must be a string.")
        keys.append(ApiKey(key=secret, collections=allowed, name=name))
    return keys


def _roots(entries: object) -> list[Path]:
    if entries is None:
        return []
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        raise ConfigurationError("'server.allowed_roots' must be a list of directories.")
    roots: list[Path] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, str) or not entry.strip():
            raise ConfigurationError(f"'server.allowed_roots[{index}]' must be a directory path, got {entry!r}.")
        path = Path(os.path.expanduser(entry))
        if not path.is_absolute():
            raise ConfigurationError(f"'server.allowed_roots[{index}]' must be an absolute path, got '{entry}'.")
        resolved = path.resolve()
        if not resolved.is_dir():
            raise ConfigurationError(f"'server.allowed_roots[{index}]' is not an existing directory: '{entry}'.")
        roots.append(resolved)
    return roots


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind_allowed(host: str, settings: ServerSettings) -> None:
    """Refuse to listen beyond loopback when no API key protects the server."""
    if settings.auth_enabled or is_loopback(host):
        return
    raise ConfigurationError(
        f"Refusing to listen on {host} without API keys: anyone who can reach this machine could read and change "
        "your collections. Add server.api_keys to the config file, or listen on 127.0.0.1."
    )
