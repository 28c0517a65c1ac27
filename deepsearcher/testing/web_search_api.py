"""A stand-in web search API and web site on 127.0.0.1, for tests and benchmarks/web_mixed.py.

It speaks SearXNG's JSON API (`GET /search?q=...&format=json`) and Tavily's (`POST /search`,
what the official SDK sends) over a small corpus of pages, ranked by the words they share with
the query, and serves those pages itself (`GET /page/<slug>`, with a robots.txt allowing them).
Every query it receives is recorded, so a test can check that no private text ever reached it;
`mode` makes it fail the way real APIs do (429 with Retry-After, 500, a garbage body).

    with WebSearchStandIn({"moon": ("The Moon", "The Moon is 384,400 km from Earth.")}) as api:
        api.base_url          # provide_settings.web_search.config.base_url
        api.page_url("moon")  # what a result points to
        api.queries           # every query received, in order
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from deepsearcher.types.json import JSONObject

__all__ = ["WebSearchStandIn"]

_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text) if len(word) > 2}


def _html(title: str, text: str) -> str:
    paragraphs = "".join(f"<p>{part}</p>" for part in text.split("\n\n"))
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        f"<nav><a href='/'>Home</a></nav><main><article><h1>{title}</h1>{paragraphs}</article></main>"
        "<footer><p>Copyright Fixture Site. All rights reserved.</p></footer></body></html>"
    )


class WebSearchStandIn:
    """`pages`: slug → (title, text). `mode`: "ok", "rate_limit" (429 with `retry_after`), "error" or "garbage"."""

    def __init__(self, pages: dict[str, tuple[str, str]], mode: str = "ok", retry_after: str = "0") -> None:
        self.pages = dict(pages)
        self.mode = mode
        self.retry_after = retry_after
        self.queries: list[str] = []
        self.page_hits: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def page_url(self, slug: str) -> str:
        return f"{self.base_url}/page/{slug}"

    def ranked(self, query: str, limit: int = 5) -> list[JSONObject]:
        """The pages sharing words with `query`, most shared first."""
        asked = _words(query)
        scored = [(len(asked & _words(f"{title} {text}")), slug) for slug, (title, text) in self.pages.items()]
        hits = [slug for score, slug in sorted(scored, key=lambda pair: (-pair[0], pair[1])) if score > 0][:limit]
        return [
            {"title": self.pages[slug][0], "url": self.page_url(slug), "content": self.pages[slug][1][:200]}
            for slug in hits
        ]

    def _answer(self, query: str, limit: int) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.queries.append(query)
        if self.mode == "rate_limit":
            return 429, {"Retry-After": self.retry_after}, b'{"error": "slow down"}'
        if self.mode == "error":
            return 500, {}, b'{"error": "internal"}'
        if self.mode == "garbage":
            return 200, {}, b"<html>not json"
        hits = self.ranked(query, limit)
        return 200, {}, json.dumps({"query": query, "results": hits}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return None

            def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parts = urlsplit(self.path)
                if parts.path == "/search":
                    params = parse_qs(parts.query)
                    status, headers, body = stand_in._answer(params.get("q", [""])[0], 10)
                    self._send(status, body, "application/json", headers)
                elif parts.path == "/robots.txt":
                    self._send(200, b"User-agent: *\nAllow: /\n", "text/plain")
                elif parts.path.startswith("/page/") and parts.path[6:] in stand_in.pages:
                    with stand_in._lock:
                        stand_in.page_hits.append(parts.path[6:])
                    title, text = stand_in.pages[parts.path[6:]]
                    self._send(200, _html(title, text).encode(), "text/html; charset=utf-8")
                else:
                    self._send(404, b"not found", "text/plain")

            def do_POST(self) -> None:  # noqa: N802 - Tavily's POST /search
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                status, headers, body = stand_in._answer(
                    str(payload.get("query", "")), int(payload.get("max_results") or 5)
                )
                self._send(status, body, "application/json", headers)

        return Handler

    def __enter__(self) -> WebSearchStandIn:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop answering: later searches find the port closed (connection refused)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __exit__(self, *exc: object) -> None:
        if self._thread.is_alive():
            self.close()
