"""The stdio wire of the MCP server: every malformed JSON-RPC message gets its error reply.

The MCP SDK's stdio transport drops a line it cannot parse or validate without answering, so a
client that sent it (with an id, waiting for the reply) waits forever. Each line is screened here
before the SDK sees it; what JSON-RPC 2.0 says is an error is answered at once:
-32700 (not JSON), -32600 (not a request: a batch, no "2.0", a bad id or method, too large),
-32602 (params that are not an object, which every MCP method takes). A line nested deeper than
`bounded_json.MAX_DEPTH` is -32600 too, refused before it is parsed (Python's decoder would
recurse once per bracket and kill the process). A malformed notification
has no id to answer: it is logged and dropped. Everything else goes on to the SDK unchanged.

The wire also keeps the process's own stdout for the protocol: fd 1 points at stderr while
serving, so a library that prints cannot corrupt the stream (the SDK does the same for the
streams it opens itself).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from io import TextIOWrapper
from typing import Any, BinaryIO

import anyio

from deepsearcher.types.json import JSONObject, JSONValue
from deepsearcher.utils.bounded_json import STRUCTURE_TOKENS, InputLimitError, check_depth

__all__ = ["MAX_MESSAGE_BYTES", "JsonRpcWire", "screen", "serve_stdio"]

logger = logging.getLogger("deepsearcher.mcp")

#: The largest message accepted (a load naming a thousand long paths is well under it).
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
#: Seconds the server keeps going once stdin has closed, for replies being written.
GRACE_SECONDS = 0.5
#: `screen`'s verdict for a malformed notification: nothing to answer, nothing to pass on.
DROP: JSONObject = {}


def _error(ident: JSONValue, code: int, message: str) -> JSONObject:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _valid_id(message: JSONObject) -> bool:
    ident = message.get("id")
    return isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def screen(line: str) -> JSONObject | None:
    """The error reply `line` deserves (`DROP`: none, but do not pass it on), or None to pass it on."""
    if len(line) > MAX_MESSAGE_BYTES:
        return _error(None, INVALID_REQUEST, f"Invalid Request: a message is at most {MAX_MESSAGE_BYTES} bytes.")
    try:
        check_depth(line, "the message")
        message = json.loads(line)
    except InputLimitError as exc:
        return _error(_top_level_id(line), INVALID_REQUEST, f"Invalid Request: {exc}")
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON.")
    if isinstance(message, list):
        return _error(None, INVALID_REQUEST, "Invalid Request: MCP takes one message per line, not a batch.")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a message is a JSON object.")
    has_id = "id" in message
    ident = message["id"] if has_id and _valid_id(message) else None
    if has_id and ident is None:
        return _error(None, INVALID_REQUEST, "Invalid Request: 'id' must be a string or an integer.")
    if message.get("jsonrpc") != "2.0":
        return _error(ident, INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\".")
    if "method" not in message:
        if has_id and ("result" in message) != ("error" in message):
            return None  # a response to one of the server's own requests
        return _error(ident, INVALID_REQUEST, "Invalid Request: neither a request nor a response.")
    problem = None
    if not isinstance(message["method"], str) or not message["method"]:
        problem = (INVALID_REQUEST, "Invalid Request: 'method' must be a non-empty string.")
    elif "params" in message and not isinstance(message["params"], dict):
        problem = (INVALID_PARAMS, f"Invalid params: the params of '{message['method']}' must be an object.")
    if problem is None:
        return _sdk_verdict(line, ident, has_id)
    if not has_id:
        logger.warning("dropped a malformed MCP notification: %s", problem[1])
        return DROP
    return _error(ident, *problem)


_ID_VALUE = re.compile(r'\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def _top_level_id(line: str) -> JSONValue:
    """The request id of a line refused unparsed (too deep), found by a scan, so the client that
    sent it gets its reply instead of waiting forever; None when there is none to find."""
    depth = 0
    for match in STRUCTURE_TOKENS.finditer(line):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
        elif depth == 1 and token == '"id"' and (value := _ID_VALUE.match(line, match.end())):
            return json.loads(value.group(1))
    return None


def _sdk_verdict(line: str, ident: JSONValue, has_id: bool) -> JSONObject | None:
    """What the SDK's own message model says of a well-formed line (it would drop a refusal silently)."""
    adapter = _message_adapter()
    if adapter is None:
        return None
    try:
        adapter.validate_json(line)
    except Exception as exc:  # noqa: BLE001 - a pydantic ValidationError of whatever SDK version
        if not has_id:
            logger.warning("dropped an MCP notification the SDK refuses: %s", exc)
            return DROP
        return _error(ident, INVALID_REQUEST, f"Invalid Request: {str(exc).splitlines()[0]}")
    return None


def _message_adapter() -> Any:
    try:
        import mcp_types  # mcp 2.x

        return mcp_types.jsonrpc_message_adapter
    except (ImportError, AttributeError):
        pass
    try:
        from mcp import types  # mcp 1.x

        return getattr(types, "jsonrpc_message_adapter", None) or __import__("pydantic").TypeAdapter(
            types.JSONRPCMessage
        )
    except (ImportError, AttributeError):
        return None


class JsonRpcWire:
    """stdin lines in (screened), stdout lines out, one writer at a time."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self._in = anyio.wrap_file(TextIOWrapper(reader, encoding="utf-8", errors="replace"))
        self._out = anyio.wrap_file(TextIOWrapper(writer, encoding="utf-8"))
        self._lock = anyio.Lock()
        #: set at the end of stdin: the client is gone, and nobody reads what is still being worked on
        self.closed = anyio.Event()
        #: ids of the tools/call requests passed on and not yet answered: what a closed stdin abandons
        self.unanswered_calls: set[object] = set()

    async def write(self, text: str) -> None:
        if self.unanswered_calls:
            self.unanswered_calls.discard(_reply_id(text))
        async with self._lock:
            await self._out.write(text)

    async def flush(self) -> None:
        async with self._lock:
            await self._out.flush()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        try:
            async for line in self._screened():
                yield line
        finally:
            self.closed.set()

    async def _screened(self) -> AsyncIterator[str]:
        async for line in self._in:
            if not line.strip():
                continue
            verdict = screen(line)
            if verdict is None:
                if '"tools/call"' in line:
                    self._note_call(line)
                yield line
            elif verdict is not DROP:
                async with self._lock:
                    await self._out.write(json.dumps(verdict) + "\n")
                    await self._out.flush()

    def _note_call(self, line: str) -> None:
        message = json.loads(line)  # screened: one JSON object
        if message.get("method") == "tools/call" and "id" in message:
            self.unanswered_calls.add(message["id"])


#: The JSON-RPC error the SDK writes for each call still running when the read side ends: the call
#: was abandoned, not answered.
CONNECTION_CLOSED = -32000


def _reply_id(text: str) -> object:
    """The id of the call a line the server writes answers (None for notifications, requests, and
    the SDK's "Connection closed" for a call it abandons)."""
    try:
        message = json.loads(text)
    except ValueError:
        return None
    if not isinstance(message, dict) or not ("result" in message or "error" in message):
        return None
    error = message.get("error")
    if isinstance(error, dict) and error.get("code") == CONNECTION_CLOSED:
        return None
    return message.get("id")


@contextmanager
def _protocol_streams() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Private duplicates of fd 0 and 1 for the protocol; fd 0 reads nothing and fd 1 goes to stderr
    meanwhile, so nothing else in the process reads requests or writes into the stream."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    try:
        with os.fdopen(wire_in, "rb") as reader, os.fdopen(wire_out, "wb") as writer:
            yield reader, writer
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def serve_stdio(server: Any) -> None:
    """Run the SDK's MCP `server` (FastMCP of mcp 1.x, MCPServer of 2.x) over this screened wire."""
    from mcp.server.stdio import stdio_server

    lowlevel = getattr(server, "_lowlevel_server", None) or server._mcp_server

    wires: list[JsonRpcWire] = []

    async def run(reader: BinaryIO, writer: BinaryIO) -> None:
        wire = JsonRpcWire(reader, writer)
        wires.append(wire)
        async with anyio.create_task_group() as group:

            async def end_with_stdin() -> None:
                await wire.closed.wait()
                await anyio.sleep(GRACE_SECONDS)  # replies already computed still go out
                group.cancel_scope.cancel()  # the tool calls still running are abandoned

            group.start_soon(end_with_stdin)
            async with stdio_server(stdin=wire, stdout=wire) as (read_stream, write_stream):  # type: ignore[arg-type]
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()

    with _protocol_streams() as (reader, writer):
        anyio.run(run, reader, writer)
    unanswered = len(wires[0].unanswered_calls) if wires else 0
    if unanswered:
        # Counted on the wire (calls in, replies out), not from threads: the wire's own idle
        # AnyIO file workers are threads too, and counting those over-reported.
        logger.warning("stdin closed: leaving %d tool call(s) unfinished", unanswered)
