"""A stand-in for the Azure AI Search REST API on 127.0.0.1: indexes and documents in memory,
exact cosine vector search, a word-overlap stand-in for BM25, RRF for hybrid, and the
`field eq 'value'` filters our client sends. Enough of the API to test the AzureSearch store."""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from stand_in import JSONHandler, StandIn

KEY = "azure-test-key"
_EQ = re.compile(r"^(\w+) eq '((?:[^']|'')*)'$")


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class AzureSearchStandIn(StandIn):
    def __init__(self) -> None:
        self.indexes: dict[str, dict[str, Any]] = {}
        self.docs: dict[str, dict[str, dict[str, Any]]] = {}
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
            results = []
            for action in body["value"]:
                kind = action.pop("@search.action")
                if kind == "delete":
                    docs.pop(action[key], None)
                elif kind == "mergeOrUpload":
                    docs[action[key]] = {**docs.get(action[key], {}), **action}
                else:
                    docs[action[key]] = action
                results.append({"key": action[key], "status": True, "statusCode": 200})
            return 200, {"value": results}
        return 200, {"value": self.search(name, body)}

    def search(self, name: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        candidates = list(self.docs[name].values())
        if body.get("filter"):
            match = _EQ.match(body["filter"])
            assert match, f"the stand-in understands only 'field eq value' filters, got {body['filter']!r}"
            field, value = match.group(1), match.group(2).replace("''", "'")
            candidates = [doc for doc in candidates if doc.get(field) == value]
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
        return [
            {"@search.score": score, **{k: v for k, v in doc.items() if not select or k in select}}
            for score, doc in ranked[skip : skip + top]
        ]
