"""Abuse probes against `deepsearcher serve` and `deepsearcher mcp` on loopback: what each hostile
request gets, how long it takes, and whether the server kept answering others meanwhile.

    python benchmarks/server_abuse.py            # a keyless server, then a keyed one, then MCP
    python benchmarks/server_abuse.py --quick    # fewer connections and guesses

Each line: the case, what came back, its time; for the big bodies, /health's worst latency while
the body was being handled (the event loop must stay free).
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _abuse_issue36 as issue36
import httpx
import yaml

from deepsearcher.testing.serve_process import ServeProcess

KEY = "the-right-key-0123456789"


def write_config(base: Path, **server: Any) -> Path:
    (base / "docs").mkdir(exist_ok=True)
    (base / "docs" / "note.txt").write_text("Grace Hopper built the first compiler.", encoding="utf-8")
    settings = {
        "provide_settings": {
            "embedding": {"provider": "deepsearcher.testing.hash_embedding:HashEmbedding", "config": {}},
            "vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}},
        },
        "server": {"allowed_roots": [str(base)], "data_dir": str(base / "data"), **server},
    }
    path = base / f"config-{len(list(base.glob('config-*')))}.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def row(case: str, outcome: str, seconds: float | None = None) -> None:
    timing = f"{seconds * 1000:9.1f} ms" if seconds is not None else " " * 12
    print(f"{case:<52} {timing}  {outcome}")


def health_while(url: str, request: Any) -> tuple[Any, float, float]:
    """Run `request()` in a thread; probe /health every 20 ms meanwhile. (response, seconds, worst /health ms)."""
    result: dict[str, Any] = {}

    def run() -> None:
        started = time.monotonic()
        result["response"] = request()
        result["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run)
    thread.start()
    latencies = []
    with httpx.Client(base_url=url, timeout=60) as client:
        while thread.is_alive():
            started = time.monotonic()
            client.get("/health")
            latencies.append((time.monotonic() - started) * 1000)
            time.sleep(0.02)
    thread.join()
    return result["response"], result["seconds"], max(latencies) if latencies else 0.0


def big_bodies(server: ServeProcess, limit: str) -> None:
    for size in (128 * 1024, 512 * 1024, 1024 * 1024, 4 * 1024 * 1024):
        body = json.dumps({"paths": ["/x" * (size // 2)]})

        def post(body: str = body) -> httpx.Response:
            return httpx.post(server.url + "/load-files/", content=body, headers={"content-type": "application/json"})

        response, seconds, worst = health_while(server.url, post)
        outcome = f"{response.status_code}, {len(response.content)} B back; /health worst {worst:.1f} ms"
        row(f"/load-files/ one path, {size // 1024} KB body ({limit})", outcome, seconds)
    many = json.dumps({"paths": ["/x" * 2000] * 1000})  # 4 MB, each path at the 4096 cap

    def post_many() -> httpx.Response:
        return httpx.post(server.url + "/load-files/", content=many, headers={"content-type": "application/json"})

    response, seconds, worst = health_while(server.url, post_many)
    outcome = f"{response.status_code}, {len(response.content)} B back; /health worst {worst:.1f} ms"
    row(f"/load-files/ 1000 paths of 4000 chars, 4 MB ({limit})", outcome, seconds)


def keyless_probes(server: ServeProcess, base: Path) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        started = time.monotonic()
        reserved = client.post(
            "/v1/load", json={"inputs": [str(base / "docs")], "collection": "_deepsearcher_collections"}
        )
        row("POST /v1/load into _deepsearcher_collections", str(reserved.status_code), time.monotonic() - started)
        listed = client.get("/v1/collections")
        row("  then GET /v1/collections", str(listed.status_code))
        started = time.monotonic()
        rebound = client.get("/v1/collections", headers={"Host": f"rebind.attacker.example:{server.port}"})
        row("GET /v1/collections, Host rebind.attacker.example", str(rebound.status_code), time.monotonic() - started)
        switch = client.post(
            "/set-provider-config/",
            json={"feature": "web_crawler", "provider": "HttpCrawler", "config": {"allow_private_network": True}},
            headers={"Host": f"rebind.attacker.example:{server.port}"},
        )
        row("POST /set-provider-config/, foreign Host", str(switch.status_code))
        started = time.monotonic()
        csrf = client.post(
            "/v1/documents",
            files={"files": ("x.txt", b"planted")},
            data={"collection": "planted"},
            headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        )
        row("multipart upload, Origin http://evil.example", str(csrf.status_code), time.monotonic() - started)
        leaked = client.post(
            "/set-provider-config/",
            json={
                "feature": "llm",
                "provider": "OpenAI",
                "config": {"model": "m", "api_key": "x", "base_url": "http://bob:hunter2@127.0.0.1:9/v1"},
            },
        )
        row("/set-provider-config/ with a password in base_url", f"password echoed: {'hunter2' in leaked.text}")


def keyed_probes(server: ServeProcess, guesses: int) -> None:
    codes: dict[int, int] = {}
    started = time.monotonic()
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for index in range(guesses):
            status = client.get("/v1/collections", headers={"Authorization": f"Bearer wrong-{index}"}).status_code
            codes[status] = codes.get(status, 0) + 1
    row(
        f"{guesses} wrong API keys",
        ", ".join(f"{n}x {code}" for code, n in sorted(codes.items())),
        time.monotonic() - started,
    )


def connection_probes(server: ServeProcess, slow: int, idle: int, timeout: float) -> None:
    sockets = []
    for _ in range(slow):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sockets.append(sock)
    sockets += [socket.create_connection(("127.0.0.1", server.port)) for _ in range(idle)]
    started = time.monotonic()
    closed = 0
    for sock in sockets:
        sock.settimeout(max(0.1, timeout + 5 - (time.monotonic() - started)))
        try:
            while sock.recv(4096):
                pass
            closed += 1
        except TimeoutError:
            pass
        sock.close()
    row(f"{slow} slowloris + {idle} idle connections", f"{closed} closed by the server", time.monotonic() - started)
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    started = time.monotonic()
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
    reply = sock.recv(100)
    sock.close()
    row("100 KB header", reply.split(b"\r\n")[0].decode(errors="replace"), time.monotonic() - started)


def mcp_probes(base: Path, config: Path) -> None:
    proc = issue36.start_mcp(config)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: Any) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        proc.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def receive(timeout: float = 5) -> str | None:
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        return proc.stdout.readline().decode() if ready else None  # type: ignore[union-attr]

    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    receive(120)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    malformed = [
        "{not json",
        "[]",
        "[1,2]",
        "42",
        '"x"',
        {"jsonrpc": "1.0", "id": 2, "method": "tools/list"},
        {"id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": 7},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "x"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 7},
        {"jsonrpc": "2.0", "id": 8, "method": ""},
    ]
    started = time.monotonic()
    answered = 0
    for message in malformed:
        send(message)
        reply = receive()
        answered += bool(reply and '"error"' in reply)
    row(
        f"MCP: {len(malformed)} malformed JSON-RPC messages",
        f"{answered} answered with an error",
        time.monotonic() - started,
    )
    send(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "x" * 20_000_000}},
        }
    )
    reply = receive(60) or ""
    row("MCP: search with a 20 MB query", "refused" if "at most" in reply or "error" in reply else reply[:80])
    send(
        {
            "jsonrpc": "2.0",
            "id": 10,
            "method": "tools/call",
            "params": {"name": "load", "arguments": {"inputs": [str(base / "docs")]}},
        }
    )
    started = time.monotonic()
    proc.stdin.close()
    proc.wait(60)
    row("MCP: stdin closed with a load running", f"exited {proc.returncode}", time.monotonic() - started)


def config_probes(base: Path) -> None:
    for name, text in (
        (
            "uri: ${UNSET}/milvus.db",
            'provide_settings:\n  vector_db:\n    config:\n      uri: "${DS_PROBE_UNSET}/milvus.db"\n',
        ),
        ("an unknown option", "provide_settings:\n  vector_db:\n    config:\n      bogus_option: 1\n"),
        ("a binary config file", None),
    ):
        path = base / "probe.yaml"
        if text is None:
            path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
        else:
            path.write_text(text, encoding="utf-8")
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "deepsearcher.cli.main", "collections", "list", "-c", str(path)],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        )
        message = " ".join((done.stderr or done.stdout).split())[:110]
        row(f"config: {name}", f"exit {done.returncode}: {message}", time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 guesses and 50 idle connections")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        print(f"{'case':<52} {'time':>12}  outcome")
        strict = ServeProcess(write_config(base)).start()
        try:  # the default body limit (1 MiB): bigger bodies are refused unread
            big_bodies(strict, "default limit")
        finally:
            strict.stop()
        server = ServeProcess(write_config(base, header_timeout=2, max_request_bytes=8 * 1024 * 1024)).start()
        try:  # an 8 MiB limit: the 4 MB bodies are parsed and their paths resolved, off the event loop
            big_bodies(server, "8 MiB limit")
            issue36.rest_nesting(server, row)
            keyless_probes(server, base)
            connection_probes(server, slow=20, idle=50 if args.quick else 300, timeout=2)
        finally:
            server.stop()
        keyed = ServeProcess(write_config(base, api_keys=[{"key": KEY}])).start()
        try:
            keyed_probes(keyed, 20 if args.quick else 1000)
        finally:
            keyed.stop()
        issue36.owner_and_guesser(base, write_config, row)
        issue36.access_log(base, write_config, row)
        mcp_probes(base, write_config(base))
        issue36.mcp_nesting(write_config(base), row)
        config_probes(base)


if __name__ == "__main__":
    main()
