"""Clients that keep using one collection while something drops it: for the drop-race test and
`benchmarks/faults.py --only drop-race`. Each request's outcome is its HTTP status, or for a
streamed query the status its `error` event carries; a 5xx comes with the start of its body."""

from __future__ import annotations

import json
import threading
from collections import Counter

import httpx

__all__ = ["KINDS", "hammer", "outcome"]

#: What the clients send, each in its own thread: search of the collection and of everything,
#: a query as JSON and as Server-Sent Events, the collection's description and its sources.
KINDS = ("search", "search all", "query", "sse", "describe", "sources")
QUESTION = {"question": "Who built it?", "agent": "naive", "collections": ["kb"]}


def outcome(client: httpx.Client, kind: str) -> int | str:
    if kind == "sse":
        with client.stream("POST", "/v1/query", json=QUESTION, headers={"accept": "text/event-stream"}) as reply:
            text = "".join(reply.iter_text())
        if "event: error" not in text:
            return reply.status_code
        data = json.loads(text.split("event: error", 1)[1].split("data:", 1)[1].split("\n", 1)[0])
        status = int(data.get("status") or 500)
        return status if status < 500 else f"{status}: {data.get('message', '')[:200]}"
    if kind == "search":
        reply = client.post("/v1/search", json={"query": "compiler", "collections": ["kb"]})
    elif kind == "search all":
        reply = client.post("/v1/search", json={"query": "compiler"})
    elif kind == "query":
        reply = client.post("/v1/query", json=QUESTION)
    elif kind == "describe":
        reply = client.get("/v1/collections/kb")
    else:
        reply = client.get("/v1/collections/kb/sources")
    return reply.status_code if reply.status_code < 500 else f"{reply.status_code}: {reply.text[:200]}"


def hammer(url: str, kind: str, stop: threading.Event, seen: Counter) -> None:
    """Send `kind` requests until `stop` is set, counting each (kind, outcome) in `seen`."""
    with httpx.Client(base_url=url, timeout=60) as client:
        while not stop.is_set():
            seen[(kind, outcome(client, kind))] += 1
