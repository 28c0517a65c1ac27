"""The issue-36 cases of benchmarks/server_abuse.py: hostile nesting (REST and MCP), a key owner
behind the same address as a guesser (with and without trusted proxies), keys in the access log,
the 422 echo and the web page's security headers. Each prints rows through `row`."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from deepsearcher.testing.serve_process import ServeProcess

Row = Callable[..., None]
BRACKETS = "[" * 1000 + "]" * 1000  # 2 KB: once a RecursionError that ended `deepsearcher mcp`
OWNER_KEY = "owner-7d2f91c04b6e58a3f1d0"  # strong: 24+ characters, 10+ distinct
SHORT_KEY = "password1"


def rest_nesting(server: ServeProcess, row: Row) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for route in ("/v1/search", "/v1/load", "/load-files/"):
            started = time.monotonic()
            reply = client.post(route, content=BRACKETS, headers={"content-type": "application/json"})
            row(f"{route}: 1,000 nested brackets (2 KB)", f"{reply.status_code}: {reply.json()['error'][:60]}",
                time.monotonic() - started)  # fmt: skip
        body = json.dumps({"inputs": ["/x" * 2100] * 900})
        reply = client.post("/v1/load", content=body, headers={"content-type": "application/json"})
        row("/v1/load: 900 paths over the cap (3.8 MB)", f"{reply.status_code}, {len(reply.content)} B back")


def start_mcp(config: Path) -> subprocess.Popen[bytes]:
    """`deepsearcher mcp -c config` with its stdin and stdout piped (its log dropped)."""
    command = [sys.executable, "-m", "deepsearcher.cli.main", "mcp", "-c", str(config)]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def mcp_nesting(config: Path, row: Row) -> None:
    proc = start_mcp(config)
    assert proc.stdin is not None and proc.stdout is not None
    started = time.monotonic()
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}
    lines = [BRACKETS, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})]
    deep_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {}}}
    lines.append(json.dumps(deep_call).replace('"arguments": {}', '"arguments": {"query": ' + BRACKETS + "}"))
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    proc.stdin.write("".join(line + "\n" for line in lines).encode())
    proc.stdin.flush()
    replies: list[dict[str, Any]] = []
    while len(replies) < 4 and select.select([proc.stdout], [], [], 120)[0]:
        line = proc.stdout.readline()
        if not line:
            break
        replies.append(json.loads(line))
    proc.stdin.close()
    proc.wait(30)
    answered = [(reply.get("id"), "error" if "error" in reply else "result") for reply in replies]
    row("MCP: 2 KB of brackets before initialize, one deep call", f"replies {answered}", time.monotonic() - started)


def owner_and_guesser(base: Path, write_config: Callable[..., Path], row: Row) -> None:
    keys = [{"key": OWNER_KEY}, {"key": SHORT_KEY}]
    for trusted in ([], ["127.0.0.1"]):
        server = ServeProcess(write_config(base, api_keys=keys, trusted_proxies=trusted)).start()
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                guesser = {"X-Forwarded-For": "203.0.113.9"}
                owner = {"X-Forwarded-For": "198.51.100.7"}

                def get(key: str, *headers: dict[str, str]) -> httpx.Response:
                    client.cookies.clear()  # each request carries only the token it names
                    merged = {name: value for part in headers for name, value in part.items()}
                    return client.get("/v1/collections", headers={**merged, "Authorization": f"Bearer {key}"})

                # the owner of the short key used it from the guesser's address before: a device token
                device = {"X-DeepSearcher-Device": get(SHORT_KEY, guesser).headers.get("x-deepsearcher-device", "")}
                for index in range(12):
                    get(f"wrong-{index}", guesser)
                statuses = {
                    "guess": get("wrong-x", guesser),
                    "owner's strong key": get(OWNER_KEY, guesser),
                    "short key, same address": get(SHORT_KEY, guesser),
                    "short key, other client": get(SHORT_KEY, owner),
                    "short key + its device token, same address": get(SHORT_KEY, guesser, device),
                    "a guess sent with that token (counted on the token)": get("wrong-y", guesser, device),
                }
            outcome = ", ".join(f"{name} {reply.status_code}" for name, reply in statuses.items())
            row(f"12 wrong keys, then (trusted_proxies {trusted or 'none'})", outcome)
        finally:
            server.stop()


def access_log(base: Path, write_config: Callable[..., Path], row: Row) -> None:
    server = ServeProcess(write_config(base, api_keys=[{"key": OWNER_KEY}]), log_level="info").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            client.get("/v1/collections", params={"api_key": OWNER_KEY})
            client.get("/v1/collections", params={"token": "guess-1234567"})
            client.get("/v1/collections", headers={"Authorization": f"Bearer {OWNER_KEY}"})
            page = client.get("/")
        time.sleep(0.5)
        log = server.log_text()
    finally:
        server.stop()
    access = [line for line in log.splitlines() if '"GET /v1/collections' in line]
    leaks = sum(line.count(OWNER_KEY) + line.count("guess-1234567") for line in log.splitlines())
    row("keys in ?api_key= / ?token= / Bearer, log at info", f"{len(access)} access lines, {leaks} keys in the log")
    if access:
        row("  e.g.", access[0].split(" - ", 1)[-1][:70])
    headers = ("content-security-policy", "x-content-type-options", "x-frame-options")
    present = [name for name in headers if name in page.headers]
    row("web page security headers", ", ".join(present) or "none")
