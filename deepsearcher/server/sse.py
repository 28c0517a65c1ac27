"""Server-Sent Events for `/v1/query`: the agent's steps, the answer's tokens, the result.

    event: step     data: StepEvent.to_dict()      one per agent step
    event: token    data: {"token": "..."}         one per streamed answer token
    event: result   data: QueryResult.to_dict()    last
    event: error    data: {"message": "..."}       instead of result when the query failed

A comment line (`: keep-alive`) goes out when nothing happened for a while so proxies
keep the connection open; when the client goes away the agent run is cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from deepsearcher.agent.events import StepEvent
from deepsearcher.agent.result import QueryResult
from deepsearcher.types.errors import report

logger = logging.getLogger("deepsearcher.server")

KEEP_ALIVE_SECONDS = 15.0
SSE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
    "Connection": "keep-alive",
}

_DONE = object()


def format_event(event: str, data: object) -> str:
    """One SSE frame; the JSON is on one line, so one `data:` field suffices."""
    payload = json.dumps(data, ensure_ascii=False, default=str)
    return f"event: {event}\ndata: {payload}\n\n"


def wants_event_stream(accept: str | None) -> bool:
    return accept is not None and "text/event-stream" in accept.lower()


async def stream_agent_run(
    run: Callable[[Callable[[StepEvent], None]], Awaitable[QueryResult]],
    keep_alive: float = KEEP_ALIVE_SECONDS,
) -> AsyncIterator[str]:
    """Frames for one run; `run(on_event)` is the agent's `aquery` with its arguments bound."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    def on_event(event: StepEvent) -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(event)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, event)

    task = asyncio.ensure_future(run(on_event))
    task.add_done_callback(lambda _: loop.call_soon(queue.put_nowait, _DONE))
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), timeout=keep_alive)
            except asyncio.TimeoutError:
                yield ": keep-alive\n\n"
                continue
            if item is _DONE:
                break
            if item.kind == "answer_token":
                yield format_event("token", {"token": item.data.get("token", "")})
            else:
                yield format_event("step", item.to_dict())
        try:
            result = task.result()
        except Exception as exc:  # noqa: BLE001 - reported as an event (unexpected ones logged with an id)
            info = report(exc, logger, "query stream")
            event = {
                "message": info.message,
                "kind": info.kind,
                "status": info.http_status,
            }
            if info.error_id:
                event["error_id"] = info.error_id
            yield format_event("error", event)
            return
        yield format_event("result", result.to_dict())
    finally:
        if not task.done():
            task.cancel()
