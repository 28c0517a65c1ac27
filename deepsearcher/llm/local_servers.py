"""Local model servers (Ollama, llama.cpp, LM Studio, vLLM) and the limits a one-slot CPU server needs.

A local server on a CPU answers one request at a time and takes seconds to minutes per reply:
the hosted-API defaults (8 calls at once, 30 s per attempt, 40 s per call) make the deep
agents' parallel judge calls queue and time out. A provider whose `base_url` is one of these
servers (known port, or `local_server:` in its config, or the Ollama provider) starts from
`LOCAL_LIMITS` instead; any limit given in the config still wins.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

__all__ = ["LOCAL_LIMITS", "LOCAL_QUERY_TIMEOUT", "LOCAL_SERVERS", "LocalServer", "detect_local_server"]


@dataclass(frozen=True)
class LocalServer:
    """One kind of local server: its name (also accepted in `local_server:`) and default ports."""

    name: str
    ports: tuple[int, ...]
    aliases: tuple[str, ...] = ()


LOCAL_SERVERS: tuple[LocalServer, ...] = (
    LocalServer("Ollama", (11434,), ("ollama",)),
    LocalServer("llama.cpp", (8080,), ("llamacpp", "llama-server", "llama_cpp", "llama-cpp-python")),
    LocalServer("LM Studio", (1234,), ("lmstudio", "lm-studio")),
    # vLLM's default port; llama-cpp-python's `python -m llama_cpp.server` uses it too
    LocalServer("vLLM", (8000,), ("vllm",)),
)

#: One request at a time, and long enough for a CPU to read a 2k-token prompt and write an answer.
LOCAL_LIMITS: dict[str, float] = {
    "max_concurrency": 1,
    "timeout": 600.0,
    "call_timeout": 1200.0,
    "stream_timeout": 1800.0,
    "max_retries": 1,
}

#: The default deadline of a whole query against a local model (a hosted one: 300 s).
LOCAL_QUERY_TIMEOUT = 1800.0


def _by_name(name: str) -> LocalServer | None:
    wanted = name.strip().lower()
    for server in LOCAL_SERVERS:
        if wanted == server.name.lower() or wanted in server.aliases:
            return server
    return None


def detect_local_server(base_url: str | None, named: str | bool | None = None) -> str | None:
    """The local server `base_url` points at ("Ollama", "llama.cpp", ...), or None for a hosted API.

    `named`: the config's `local_server` (False: never treat it as local; True or a name: it is
    local whatever its port; None: decided by the port)."""
    if named is False:
        return None
    if isinstance(named, str) and named.strip():
        server = _by_name(named)
        if server is None:
            known = ", ".join(s.name for s in LOCAL_SERVERS)
            raise ValueError(f"Unknown local_server {named!r}: one of {known}, true, or false")
        return server.name
    port = urllib.parse.urlparse(base_url or "").port if base_url else None
    for server in LOCAL_SERVERS:
        if port in server.ports:
            return server.name
    return "local server" if named is True else None
