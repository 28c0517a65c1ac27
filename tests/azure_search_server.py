"""A stand-in for the Azure AI Search REST API on 127.0.0.1: indexes and documents in memory,
exact cosine vector search, a word-overlap stand-in for BM25, RRF for hybrid, and the filters
our client sends: `field eq 'value'`, `[not] search.in(field, 'a,b', ',')` and their `and`.
Enough of the API to test the AzureSearch store."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from stand_in import JSONHandler, StandIn

KEY = "azure-test-key"
_EQ = re.compile(r"^(\w+) eq '((?:[^']|'')*)'$")
_IN = re.compile(r"^(not )?search\.in\((\w+), '((?:[^']|'')*)', '([^']+)'\)$")
_AND = re.compile(r"^\((.*)\) and (.*)$")
Doc = dict[str, Any]


def _matcher(expression: str) -> Callable[[Doc], bool]:
    """A document predicate for the OData filters the store sends (Azure's documented syntax)."""
    expression = expression.strip()
    both = _AND.match(expression)
    if both:
        left, right = _matcher(both.group(1)), _matcher(both.group(2))
        return lambda doc: left(doc) and right(doc)
    among = _IN.match(expression)
    if among:
        negate, field = bool(among.group(1)), among.group(2)
        values = set(re.split("[" + re.escape(among.group(4)) + "]", among.group(3).replace("''", "'")))
        return lambda doc: (doc.get(field) in values) != negate
    match = _EQ.match(expression)
    assert match, f"the stand-in does not understand the filter {expression!r}"
    field, value = match.group(1), match.group(2).replace("''", "'")
    return lambda doc: doc.get(field) == value


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class AzureSearchStandIn(StandIn):
    def __init__(self, lag: int = 0, index_lag: dict[str, int] | None = None) -> None:
        """lag: document writes become visible (to searches and lookups) only `lag` requests later,
        as Azure indexes in near real time (documented: searchable within about a second), each index
        on its own: `index_lag` gives some indexes another lag."""
        self.indexes: dict[str, dict[str, Any]] = {}
        self.docs: dict[str, dict[str, dict[str, Any]]] = {}
        self.lag = lag
        self.index_lag = index_lag or {}
        self.lock = threading.Lock()
        self.pending: list[tuple[int, str, list[dict[str, Any]]]] = []  # (due request number, index, actions)
        self.requests: list[tuple[str, str]] = []
        stand_in = self

        class Handler(JSONHandler):
            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                raw = self.body()
                stand_in.requests.append((method, parts.path))
                if self.headers.get("api-key") != KEY:
                    return self.reply(403, {"error": {"message": "Invalid api-key"}})
                if "api-version" not in parse_qs(parts.query):
                    return self.reply(400, {"error": {"message": "api-version is missing"}})
                with stand_in.lock:  # one request at a time, as the lagged writes count requests
                    status, payload = stand_in.handle(
                        method, parts.path.strip("/").split("/"), json.loads(raw) if raw else None
                    )
                self.reply(status, payload)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_PUT(self) -> None:
                self._serve("PUT")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        super().__init__(Handler)

    # ------------------------------------------------------------------ the API

    def handle(self, method: str, path: list[str], body: Any) -> tuple[int, Any]:
        due = [entry for entry in self.pending if entry[0] <= len(self.requests)]
        self.pending = [entry for entry in self.pending if entry[0] > len(self.requests)]
        for _, index, actions in due:
            self.apply(index, actions)
        if path == ["indexes"] and method == "GET":
            return 200, {"value": [{"name": name} for name in self.indexes]}
        name = path[1]
        if len(path) == 2:
            if method == "PUT":
                self.indexes[name] = body
                self.docs.setdefault(name, {})
                return 201, body
            if name not in self.indexes:
                return 404, {"error": {"message": f"No index with the name '{name}' was found"}}
            if method == "DELETE":
                del self.indexes[name], self.docs[name]
                return 204, None
            return 200, self.indexes[name]
        if name not in self.indexes:
            return 404, {"error": {"message": f"The index '{name}' was not found"}}
        docs = self.docs[name]
        key = next(field["name"] for field in self.indexes[name]["fields"] if field.get("key"))
        if len(path) == 4 and path[3] not in ("index", "search"):
            doc = docs.get(path[3])
            return (200, doc) if doc else (404, None)
        if path[3] == "index":
            lag = self.index_lag.get(name, self.lag)
            if lag:
                self.pending.append((len(self.requests) + lag, name, body["value"]))
            else:
                self.apply(name, body["value"])
            return 200, {"value": [{"key": action[key], "status": True, "statusCode": 200} for action in body["value"]]}
        hits, count = self.search(name, body)
        return 200, {"value": hits, **({"@odata.count": count} if body.get("count") else {})}

    def settle(self) -> None:
        """Make every write searchable now (as when a second has passed)."""
        with self.lock:
            for _, index, actions in self.pending:
                self.apply(index, actions)
            self.pending = []

    def apply(self, name: str, actions: list[dict[str, Any]]) -> None:
        if name not in self.docs:
            return
        docs = self.docs[name]
        key = next(field["name"] for field in self.indexes[name]["fields"] if field.get("key"))
        for action in actions:
            action = dict(action)
            kind = action.pop("@search.action")
            if kind == "delete":
                docs.pop(action[key], None)
            elif kind == "mergeOrUpload":
                docs[action[key]] = {**docs.get(action[key], {}), **action}
            else:
                docs[action[key]] = action

    def search(self, name: str, body: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
        """The page of hits, and how many documents matched in all (`count: true`)."""
        candidates = list(self.docs[name].values())
        if body.get("filter"):
            keep = _matcher(body["filter"])
            candidates = [doc for doc in candidates if keep(doc)]
        rankings: list[list[tuple[float, dict[str, Any]]]] = []
        for query in body.get("vectorQueries", []):
            scored = [(1.0 / (2.0 - _cosine(query["vector"], doc[query["fields"]])), doc) for doc in candidates]
            rankings.append(sorted(scored, key=lambda pair: -pair[0])[: query["k"]])
        text = body.get("search")
        if text and text != "*":
            words = set(re.findall(r"\w+", text.lower()))
            searchable = [
                f["name"] for f in self.indexes[name]["fields"] if f.get("searchable") and f["type"] == "Edm.String"
            ]
            fields = body["searchFields"].split(",") if body.get("searchFields") else searchable
            scored = []
            for doc in candidates:
                seen = set(re.findall(r"\w+", " ".join(str(doc.get(f, "")) for f in fields).lower()))
                scored.append((float(len(words & seen)), doc))
            rankings.append(sorted([pair for pair in scored if pair[0] > 0], key=lambda pair: -pair[0]))
        if not rankings:
            ranked = [(1.0, doc) for doc in candidates]
        elif len(rankings) == 1:
            ranked = rankings[0]
        else:  # reciprocal rank fusion, as Azure's hybrid search
            fused: dict[int, list[Any]] = {}
            for ranking in rankings:
                for rank, (_, doc) in enumerate(ranking):
                    fused.setdefault(id(doc), [0.0, doc])[0] += 1.0 / (60 + rank + 1)
            ranked = sorted(((score, doc) for score, doc in fused.values()), key=lambda pair: -pair[0])
        skip, top = int(body.get("skip", 0)), int(body.get("top", 50))
        select = [field for field in (body.get("select") or "").split(",") if field]
        page = [
            {"@search.score": score, **{k: v for k, v in doc.items() if not select or k in select}}
            for score, doc in ranked[skip : skip + top]
        ]
        return page, len(ranked)
