"""`deepsearcher mcp` as a raw JSON-RPC peer sees it: every malformed message is answered with its
JSON-RPC error, inputs are capped as in REST, and the process ends as soon as stdin closes, even
with a tool call still running. A real subprocess over real pipes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from deepsearcher.mcp_wire import DROP, screen


class Peer:
    def __init__(self, config: Path, before: tuple[str, ...] = ()) -> None:
        """Starts the server and initializes it; `before` are lines sent ahead of `initialize`,
        whose replies are kept in `early`."""
        env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
        env.update({"HF_HUB_OFFLINE": "1"})
        self.stderr = open(config.parent / "mcp-stderr.log", "w", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deepsearcher.cli.main", "mcp", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            # Unbuffered: `receive` selects on the pipe, and a buffered reader that pulled two replies in
            # one read would leave the second in its buffer while select waits on an empty pipe.
            bufsize=0,
            cwd=config.parent,
            env=env,
        )
        for line in before:
            self.send(line)
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        self.early = [self.receive(120) for _ in before]
        assert self.receive(120)["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: Any) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no reply"
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stderr.close()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for index in range(120):  # enough for a load that is still running when stdin closes
        (folder / f"f{index}.txt").write_text(" ".join(f"word{n} about topic {index}." for n in range(500)))
    path = tmp_path / "config.yaml"
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}}},
        "server": {"allowed_roots": [str(tmp_path)]},
    }
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


MALFORMED = [
    ("{not json", None, -32700),
    ("[]", None, -32600),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]', None, -32600),
    ("42", None, -32600),
    ({"jsonrpc": "1.0", "id": 2, "method": "tools/list"}, 2, -32600),
    ({"id": 3, "method": "tools/list"}, 3, -32600),
    ({"jsonrpc": "2.0", "id": 4, "method": 7}, 4, -32600),
    ({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": [1, 2]}, 5, -32602),
    ({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "x"}, 6, -32602),
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}, None, -32600),
    ({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, None, -32600),
    ({"jsonrpc": "2.0", "id": 7}, 7, -32600),
    ({"jsonrpc": "2.0", "id": 8, "method": ""}, 8, -32600),
    # nested deeper than any request: refused unparsed, its id found by a scan
    (
        '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"a": ' + "[" * 5000 + "]" * 5000 + "}}",
        12,
        -32600,
    ),
    ("[" * 100_000, None, -32600),
]
#: A 2 KB line that once made Python's decoder raise RecursionError and the process exit with no reply.
BRACKETS = "[" * 1000 + "]" * 1000


def test_every_malformed_message_gets_its_json_rpc_error_and_the_stream_goes_on(config: Path) -> None:
    peer = Peer(config, before=(BRACKETS,))  # the initialize sent right after it is answered too
    try:
        assert peer.early[0]["id"] is None and peer.early[0]["error"]["code"] == -32600
        assert "1000 levels deep" in peer.early[0]["error"]["message"]
        for message, ident, code in MALFORMED:
            peer.send(message)
            reply = peer.receive()
            assert (reply["id"], reply["error"]["code"]) == (ident, code), (message, reply)
        peer.send({"jsonrpc": "2.0", "method": "notifications/bogus", "params": [1]})  # a notification: no reply
        peer.send({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
        assert {tool["name"] for tool in peer.receive()["result"]["tools"]} >= {"search", "load"}

        peer.send(
            {
                "jsonrpc": "2.0",
                "id": 10,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": "x" * 30_000}},
            }
        )
        reply = peer.receive()
        assert reply["result"]["isError"] and "at most 20000" in reply["result"]["content"][0]["text"]
    finally:
        peer.close()


def test_the_process_ends_when_stdin_closes_even_mid_tool_call(config: Path) -> None:
    peer = Peer(config)
    try:
        # A call that finished leaves an idle worker thread behind: it must not count as unfinished
        # (the count once came from the threads alive and said 2 here).
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_collections"}})
        assert peer.receive(60)["id"] == 2
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "load", "arguments": {"inputs": [str(config.parent / "docs")]}},
            }
        )
        time.sleep(1.5)
        assert peer.proc.poll() is None  # the load is running
        closed = time.monotonic()
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()
        peer.proc.wait(timeout=30)
        assert time.monotonic() - closed < 10 and peer.proc.returncode == 0
        assert "leaving 1 tool call(s) unfinished" in (config.parent / "mcp-stderr.log").read_text()
    finally:
        peer.close()


def test_screen_passes_valid_messages_on_and_drops_bad_notifications() -> None:
    assert screen(json.dumps({"jsonrpc": "2.0", "id": "a", "method": "tools/list"})) is None
    assert screen(json.dumps({"jsonrpc": "2.0", "id": 3, "result": {}})) is None  # a reply to the server
    assert screen(json.dumps({"jsonrpc": "2.0", "method": "notifications/x", "params": 5})) is DROP
    big = screen('{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"q": "' + "a" * 5_000_000 + '"}}')
    assert big is not None and big["error"]["code"] == -32600
