"""A real OpenAI-compatible chat server on 127.0.0.1 that answers from a script.

Tests point a real provider at it (``base_url=server.base_url``) and so exercise the
whole HTTP path: SDK, retries, timeouts, streaming, concurrency. Pure asyncio, no
dependencies; it starts in a background thread in milliseconds.

    with ScriptedLLMServer(fallback="OK") as server:
        server.on(r"capital of France", "Paris")          # rule on the last user message
        server.queue(Fail.rate_limit(retry_after=1), "hi")  # the next calls, in order
        llm = server.llm(max_retries=2)                     # an OpenAI provider pointed here
        llm.chat([{"role": "user", "content": "hello"}])
        server.requests[-1].messages                       # what was sent

Speaks ``POST /v1/chat/completions`` (plain and SSE streaming with a final usage chunk
when ``stream_options.include_usage``; also Azure's deployment paths) and
``GET /v1/models``; for the Anthropic and Gemini providers also ``POST /v1/messages`` and
``POST .../models/M:generateContent`` / ``:streamGenerateContent``, and Bedrock's
``POST /model/M/converse`` (not its binary streaming). Usage counts
whitespace-separated words.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from deepsearcher.llm._messages import text_of
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from deepsearcher.llm.openai_llm import OpenAI

__all__ = [
    "Fail",
    "RecordedRequest",
    "Reply",
    "Rule",
    "ScriptedLLMServer",
    "scripted_llm_fixture",
]

logger = logging.getLogger(__name__)


@dataclass
class Reply:
    """A successful answer. `latency` overrides the server's; `chunk_delay` paces streaming."""

    text: str
    latency: float | None = None
    chunk_delay: float | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None


@dataclass
class Fail:
    """A failure on purpose, for one call. Build with the classmethods."""

    kind: str
    http_status: int = 500
    retry_after: str | float | None = None
    seconds: float = 30.0
    body: str = ""
    after_chunks: int = 0
    latency: float | None = None
    #: Sent as the x-request-id header of an error reply (as OpenAI's API does).
    request_id: str | None = None

    @classmethod
    def rate_limit(cls, retry_after: str | float | None = 1) -> Fail:
        """429 Too Many Requests, with a Retry-After header (seconds or an HTTP date) unless None."""
        return cls(
            "status",
            http_status=429,
            retry_after=retry_after,
            body="Rate limit reached, slow down.",
        )

    @classmethod
    def server_error(cls, status: int = 500, message: str = "The server had an error.") -> Fail:
        return cls("status", http_status=status, body=message)

    @classmethod
    def status(
        cls, status: int, message: str = "error", retry_after: str | float | None = None, request_id: str | None = None
    ) -> Fail:
        """Any HTTP error status (401, 404, 503, ...)."""
        return cls("status", http_status=status, body=message, retry_after=retry_after, request_id=request_id)

    @classmethod
    def timeout(cls, seconds: float = 30.0) -> Fail:
        """Say nothing for `seconds` (longer than the client's timeout), then answer."""
        return cls("timeout", seconds=seconds)

    @classmethod
    def garbage(cls, body: str = "<html><body>502 Bad Gateway</body></html>") -> Fail:
        """200 OK with a body that is not JSON."""
        return cls("garbage", body=body)

    @classmethod
    def truncated(cls) -> Fail:
        """200 OK with a completion whose JSON stops half way (correctly framed)."""
        return cls("truncated")

    @classmethod
    def drop(cls) -> Fail:
        """Close the connection without answering."""
        return cls("drop")

    @classmethod
    def drop_mid_stream(cls, after_chunks: int = 2) -> Fail:
        """Streaming only: send `after_chunks` chunks, then close the connection."""
        return cls("drop_mid_stream", after_chunks=after_chunks)


Script = str | Reply | Fail | Callable[["RecordedRequest"], str | Reply | Fail]


_GEMINI_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")
_BEDROCK_PATH = re.compile(r"^/model/([^/]+)/converse$")


def count_words(text: str) -> int:
    return len(text.split())


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw_body: bytes
    api: str  # "openai" or "anthropic"
    received_at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, str]]:
        """The messages as {role, content: text}; Anthropic's `system` comes first as a system message."""
        body = self.body if isinstance(self.body, dict) else {}
        result = []
        if self.api == "gemini":
            instruction = body.get("systemInstruction") or body.get("system_instruction")
            if instruction:
                result.append(
                    {
                        "role": "system",
                        "content": text_of((instruction or {}).get("parts", instruction)),
                    }
                )
            for content in body.get("contents") or []:
                role = "assistant" if content.get("role") == "model" else "user"
                result.append({"role": role, "content": text_of(content.get("parts"))})
            return result
        system = body.get("system") if self.api in ("anthropic", "bedrock") else None
        if system:
            result.append({"role": "system", "content": text_of(system)})
        for message in body.get("messages") or []:
            if isinstance(message, dict):
                result.append(
                    {
                        "role": str(message.get("role", "")),
                        "content": text_of(message.get("content")),
                    }
                )
        return result

    @property
    def model(self) -> str | None:
        if self.api == "gemini":
            match = _GEMINI_PATH.search(self.path)
            return match.group(1) if match else None
        if self.api == "bedrock":
            match = _BEDROCK_PATH.search(self.path)
            return urllib.parse.unquote(match.group(1)) if match else None
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def stream(self) -> bool:
        if self.api == "gemini":
            return ":streamGenerateContent" in self.path
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def json_mode(self) -> bool:
        body = self.body if isinstance(self.body, dict) else {}
        if self.api == "gemini":
            config = body.get("generationConfig") or {}
            return config.get("responseMimeType") == "application/json"
        return (body.get("response_format") or {}).get("type") == "json_object"

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")

    @property
    def last_user_message(self) -> str:
        for message in reversed(self.messages):
            if message["role"] == "user":
                return message["content"]
        return ""

    @property
    def prompt_text(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


class Rule:
    """Replies for requests that match; each match takes the next reply, the last one repeats."""

    def __init__(
        self,
        match: str | re.Pattern[str] | Callable[[RecordedRequest], bool],
        replies: tuple[Script, ...],
        where: str,
    ) -> None:
        if not replies:
            raise ValueError("a rule needs at least one reply")
        if where not in ("last_user", "any", "system"):
            raise ValueError("where must be 'last_user', 'any' or 'system'")
        self.match = match
        self.replies = list(replies)
        self.where = where
        self.hits = 0

    def matches(self, request: RecordedRequest) -> bool:
        if callable(self.match) and not isinstance(self.match, re.Pattern):
            return bool(self.match(request))
        pattern = self.match if isinstance(self.match, re.Pattern) else re.compile(self.match, re.I | re.S)
        if self.where == "last_user":
            texts = [request.last_user_message]
        elif self.where == "system":
            texts = [m["content"] for m in request.messages if m["role"] == "system"]
        else:
            texts = [m["content"] for m in request.messages]
        return any(pattern.search(text) for text in texts)

    def take(self) -> Script:
        reply = self.replies[min(self.hits, len(self.replies) - 1)]
        self.hits += 1
        return reply


class _Request:
    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body


_STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


class ScriptedLLMServer:
    """The server. Use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        *,
        fallback: Script = "OK",
        latency: float = 0.0,
        chunk_delay: float = 0.0,
        model: str = "scripted-model",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.fallback = fallback
        self.latency = latency
        self.chunk_delay = chunk_delay
        self.model = model
        self.host = host
        self.port = port
        self.requests: list[RecordedRequest] = []
        self.rules: list[Rule] = []
        self._queue: list[Script] = []
        self._lock = threading.Lock()
        self._active = 0
        self.max_concurrency = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ script

    def on(
        self,
        match: str | re.Pattern[str] | Callable[[RecordedRequest], bool],
        *replies: Script,
        where: str = "last_user",
    ) -> Rule:
        """Answer requests that match `match` (a regex searched case-insensitively in the last
        user message, or in any/system message with `where=`; or a callable on the request)."""
        rule = Rule(match, replies, where)
        with self._lock:
            self.rules.append(rule)
        return rule

    def queue(self, *replies: Script) -> None:
        """Replies for the next calls, in order; they come before rules and the fallback."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def queued(self) -> int:
        return len(self._queue)

    def reset(self) -> None:
        """Forget rules, queue, recorded requests and the concurrency high-water mark."""
        with self._lock:
            self.rules.clear()
            self._queue.clear()
            self.requests.clear()
            self.max_concurrency = 0

    @property
    def call_count(self) -> int:
        return len(self.requests)

    @property
    def active(self) -> int:
        return self._active

    def _pick(self, request: RecordedRequest) -> Reply | Fail:
        with self._lock:
            if self._queue:
                script: Script = self._queue.pop(0)
            else:
                script = self.fallback
                for rule in self.rules:
                    if rule.matches(request):
                        script = rule.take()
                        break
        if callable(script) and not isinstance(script, (Reply, Fail)):
            script = script(request)
        if isinstance(script, str):
            return Reply(script)
        if isinstance(script, (Reply, Fail)):
            return script
        raise TypeError(f"a scripted reply must be str, Reply or Fail, got {script!r}")

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL: `url + "/v1"`."""
        return self.url + "/v1"

    def start(self) -> ScriptedLLMServer:
        if self._thread is not None:
            return self
        ready = threading.Event()
        errors: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)

            async def boot() -> None:
                self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=512)
                self.port = self._server.sockets[0].getsockname()[1]

            try:
                loop.run_until_complete(boot())
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="scripted-llm-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            self._thread = None
            raise errors[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)

        if not loop.is_closed():
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ clients

    def llm_config(self, **config: Any) -> dict[str, Any]:
        """`provide_settings.llm` for an OpenAI provider pointed at this server."""
        settings = {"model": self.model, "api_key": "test", "base_url": self.base_url}
        settings.update(config)
        return {"provider": "OpenAI", "config": settings}

    def llm(self, **config: object) -> OpenAI:
        """A real `deepsearcher.llm.OpenAI` provider pointed at this server."""
        from deepsearcher.llm.openai_llm import OpenAI

        return OpenAI(**self.llm_config(**config)["config"])

    # ------------------------------------------------------------------ HTTP

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                keep_alive = await self._dispatch(request, writer)
                if not keep_alive:
                    break
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ) as exc:
            # A client that hangs up or sends a malformed request ends its connection only.
            logger.debug("scripted LLM server: connection ended: %r", exc)
        except asyncio.CancelledError:
            logger.debug("scripted LLM server: connection cancelled at shutdown")
        finally:
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(OSError, RuntimeError):  # the transport may already be gone
                writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> _Request | None:
        line = await reader.readline()
        if not line:
            return None
        parts = line.decode("latin-1").strip().split()
        if len(parts) < 2:
            return None
        method, path = parts[0].upper(), parts[1]
        headers: dict[str, str] = {}
        while True:
            raw = await reader.readline()
            if not raw or raw in (b"\r\n", b"\n"):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await reader.readline()
                    break
                body += await reader.readexactly(size)
                await reader.readline()
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        return _Request(method, path.split("?", 1)[0], headers, body)

    @staticmethod
    async def _send(
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        lines = [
            f"HTTP/1.1 {status} {_STATUS_TEXT.get(status, 'Status')}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}",
        ]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()

    async def _dispatch(self, request: _Request, writer: asyncio.StreamWriter) -> bool:
        path = request.path.rstrip("/")
        if request.method == "GET" and path in ("/v1/models", "/models"):
            payload = {
                "object": "list",
                "data": [
                    {
                        "id": self.model,
                        "object": "model",
                        "created": 0,
                        "owned_by": "scripted",
                    }
                ],
            }
            await self._send(writer, 200, json.dumps(payload).encode())
            return True
        if request.method == "GET" and path in ("", "/health"):
            await self._send(writer, 200, b'{"status": "ok"}')
            return True
        if request.method == "POST" and path.endswith("/chat/completions"):  # also Azure's deployment paths
            return await self._completion(request, writer, "openai")
        if request.method == "POST" and path in ("/v1/messages", "/messages"):
            return await self._completion(request, writer, "anthropic")
        if request.method == "POST" and _GEMINI_PATH.search(path):
            return await self._completion(request, writer, "gemini")
        if request.method == "POST" and _BEDROCK_PATH.search(path):
            return await self._completion(request, writer, "bedrock")
        error = {
            "error": {
                "message": f"No route {request.method} {request.path}",
                "type": "not_found",
            }
        }
        await self._send(writer, 404, json.dumps(error).encode())
        return True

    async def _completion(self, request: _Request, writer: asyncio.StreamWriter, api: str) -> bool:
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = None
        with self._lock:
            record = RecordedRequest(
                len(self.requests),
                request.method,
                request.path,
                request.headers,
                body,
                request.body,
                api,
            )
            self.requests.append(record)
            self._active += 1
            self.max_concurrency = max(self.max_concurrency, self._active)
        try:
            if not isinstance(body, dict) or not isinstance(
                body.get("contents" if api == "gemini" else "messages"), list
            ):
                await self._send_error(
                    writer,
                    api,
                    400,
                    "The request body must be JSON with a 'messages' list.",
                )
                return True
            reply = self._pick(record)
            latency = reply.latency if reply.latency is not None else self.latency
            if latency:
                await asyncio.sleep(latency)
            if isinstance(reply, Fail):
                return await self._fail(reply, record, writer, api)
            if record.stream and api != "bedrock":
                await self._stream(reply, record, writer, api)
            else:
                await self._send(writer, 200, json.dumps(self._payload(reply, record, api)).encode())
            return True
        finally:
            with self._lock:
                self._active -= 1

    def _usage(self, reply: Reply, record: RecordedRequest) -> dict[str, int]:
        prompt = count_words(record.prompt_text)
        completion = count_words(reply.text)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        usage.update(reply.usage or {})
        return usage

    def _payload(self, reply: Reply, record: RecordedRequest, api: str) -> JSONObject:
        usage = self._usage(reply, record)
        model = record.model or self.model
        if api == "gemini":
            return self._gemini_payload(reply.text, usage, reply.finish_reason)
        if api == "bedrock":
            return {
                "output": {"message": {"role": "assistant", "content": [{"text": reply.text}]}},
                "stopReason": "end_turn" if reply.finish_reason == "stop" else reply.finish_reason,
                "usage": {
                    "inputTokens": usage["prompt_tokens"],
                    "outputTokens": usage["completion_tokens"],
                    "totalTokens": usage["total_tokens"],
                },
                "metrics": {"latencyMs": 1},
            }
        if api == "anthropic":
            return {
                "id": f"msg_{next(self._ids)}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": reply.text}],
                "stop_reason": "end_turn" if reply.finish_reason == "stop" else reply.finish_reason,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage["prompt_tokens"],
                    "output_tokens": usage["completion_tokens"],
                },
            }
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
        }

    @staticmethod
    def _gemini_payload(text: str, usage: dict[str, int] | None, finish_reason: str | None) -> JSONObject:
        candidate: JSONObject = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "index": 0,
        }
        if finish_reason:
            candidate["finishReason"] = "STOP" if finish_reason == "stop" else finish_reason.upper()
        payload: JSONObject = {"candidates": [candidate]}
        if usage is not None:
            payload["usageMetadata"] = {
                "promptTokenCount": usage["prompt_tokens"],
                "candidatesTokenCount": usage["completion_tokens"],
                "totalTokenCount": usage["total_tokens"],
            }
        return payload

    async def _send_error(
        self,
        writer: asyncio.StreamWriter,
        api: str,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        if api == "anthropic":
            kind = {
                429: "rate_limit_error",
                400: "invalid_request_error",
                401: "authentication_error",
            }.get(status, "api_error")
            payload: JSONObject = {
                "type": "error",
                "error": {"type": kind, "message": message},
            }
        elif api == "bedrock":
            kind = {
                429: "ThrottlingException",
                400: "ValidationException",
                403: "AccessDeniedException",
                503: "ServiceUnavailableException",
            }.get(status, "InternalServerException")
            payload = {"message": message}
            headers = {**(headers or {}), "x-amzn-ErrorType": kind}
        elif api == "gemini":
            kind = {
                429: "RESOURCE_EXHAUSTED",
                400: "INVALID_ARGUMENT",
                401: "UNAUTHENTICATED",
                404: "NOT_FOUND",
            }.get(status, "INTERNAL")
            payload = {"error": {"code": status, "message": message, "status": kind}}
        else:
            kind = {
                429: "rate_limit_exceeded",
                400: "invalid_request_error",
                401: "invalid_api_key",
            }.get(status, "server_error")
            payload = {"error": {"message": message, "type": kind, "code": kind}}
        await self._send(writer, status, json.dumps(payload).encode(), headers=headers)

    async def _fail(
        self,
        fail: Fail,
        record: RecordedRequest,
        writer: asyncio.StreamWriter,
        api: str,
    ) -> bool:
        if fail.kind == "status":
            headers = {"Retry-After": str(fail.retry_after)} if fail.retry_after is not None else {}
            if fail.request_id is not None:
                headers["x-request-id"] = fail.request_id
            await self._send_error(writer, api, fail.http_status, fail.body or "error", headers or None)
            return True
        if fail.kind == "timeout":
            await asyncio.sleep(fail.seconds)
            reply = Reply(fail.body or "late reply")
            await self._send(writer, 200, json.dumps(self._payload(reply, record, api)).encode())
            return True
        if fail.kind == "garbage":
            await self._send(writer, 200, fail.body.encode())
            return True
        if fail.kind == "truncated":
            full = json.dumps(self._payload(Reply(fail.body or "this reply is cut off"), record, api)).encode()
            await self._send(writer, 200, full[: len(full) // 2])
            return True
        if fail.kind == "drop":
            writer.close()
            return False
        if fail.kind == "drop_mid_stream":
            await self._stream(
                Reply(fail.body or "one two three four five six seven eight"),
                record,
                writer,
                api,
                drop_after=fail.after_chunks,
            )
            return False
        raise ValueError(f"unknown failure kind {fail.kind!r}")

    async def _stream(
        self,
        reply: Reply,
        record: RecordedRequest,
        writer: asyncio.StreamWriter,
        api: str,
        drop_after: int | None = None,
    ) -> None:
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: "
            "no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        writer.write(head.encode("latin-1"))
        delay = reply.chunk_delay if reply.chunk_delay is not None else self.chunk_delay
        tokens = re.findall(r"\s*\S+", reply.text) or ([reply.text] if reply.text else [])
        usage = self._usage(reply, record)
        sent = 0

        async def event(data: JSONObject | str, name: str | None = None) -> None:
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            raw = frame.encode()
            writer.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            await writer.drain()

        model = record.model or self.model
        base: JSONObject = {}
        if api == "gemini":
            pass
        elif api == "anthropic":
            message_id = f"msg_{next(self._ids)}"
            start: JSONObject = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": usage["prompt_tokens"], "output_tokens": 0},
            }
            await event({"type": "message_start", "message": start}, "message_start")
            await event(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
        else:
            chunk_id = f"chatcmpl-{next(self._ids)}"
            base = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
            }
            await event(
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": ""},
                            "finish_reason": None,
                        }
                    ],
                }
            )
        for token in tokens:
            if drop_after is not None and sent >= drop_after:
                writer.close()
                return
            if delay:
                await asyncio.sleep(delay)
            if api == "gemini":
                await event(self._gemini_payload(token, None, None))
            elif api == "anthropic":
                await event(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": token},
                    },
                    "content_block_delta",
                )
            else:
                await event(
                    {
                        **base,
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"content": token},
                                "finish_reason": None,
                            }
                        ],
                    }
                )
            sent += 1
        if drop_after is not None:
            writer.close()
            return
        if api == "gemini":
            await event(self._gemini_payload("", usage, reply.finish_reason))
        elif api == "anthropic":
            await event({"type": "content_block_stop", "index": 0}, "content_block_stop")
            await event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": usage["completion_tokens"]},
                },
                "message_delta",
            )
            await event({"type": "message_stop"}, "message_stop")
        else:
            await event(
                {
                    **base,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}],
                }
            )
            if (record.body.get("stream_options") or {}).get("include_usage"):
                await event({**base, "choices": [], "usage": usage})
            await event("[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()


def scripted_llm_fixture(name: str = "scripted_llm", scope: str = "function", **server_options: Any) -> Any:
    """A pytest fixture that yields a started ScriptedLLMServer; put it in a test module or
    conftest: ``scripted_llm = scripted_llm_fixture()``."""
    import pytest

    @pytest.fixture(name=name, scope=cast(Any, scope))
    def _fixture() -> Iterator[ScriptedLLMServer]:
        with ScriptedLLMServer(**server_options) as server:
            yield server

    return _fixture
