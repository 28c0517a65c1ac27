"""A stand-in for a remote embedding API: OpenAI's ``POST /embeddings`` on 127.0.0.1.

It answers after a fixed `latency` (what a round trip to a hosted API costs), with unit
vectors derived from each text's hash (so equal texts get equal vectors), and records how
many requests were in flight at once. `failures` scripts the next answers and `scripted`
the answer to request number N (429 with Retry-After, 500, 400) to exercise retries. Used by the tests and by
``benchmarks/remote_embedding.py``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from deepsearcher.types.json import JSONObject


def text_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for `text`."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 + 0.01 * i for i in range(dim)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


class StandInEmbeddingServer:
    """OpenAI-compatible embeddings with `latency` seconds per request; use as a context manager."""

    def __init__(self, latency: float = 0.2, dim: int = 8, port: int = 0) -> None:
        self.latency = latency
        self.dim = dim
        self.failures: list[tuple[int, dict[str, str]]] = []  # (status, headers) for the next requests
        self.scripted: dict[int, tuple[int, dict[str, str]]] = {}  # request number (1-based) -> answer
        self.requests = 0
        self.texts = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, name="stand-in-embeddings", daemon=True)

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], JSONObject]:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            failure = self.failures.pop(0) if self.failures else self.scripted.pop(self.requests, None)
        try:
            time.sleep(self.latency)
            if failure is not None:
                return (
                    failure[0],
                    failure[1],
                    {"error": {"message": f"scripted {failure[0]}"}},
                )
            texts = body.get("input") or []
            texts = [texts] if isinstance(texts, str) else texts
            with self._lock:
                self.texts += len(texts)
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": text_vector(t, self.dim),
                }
                for i, t in enumerate(texts)
            ]
            return (
                200,
                {},
                {"object": "list", "data": data, "model": body.get("model", "")},
            )
        finally:
            with self._lock:
                self.in_flight -= 1

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "requests": self.requests,
                "texts": self.texts,
                "peak_in_flight": self.peak_in_flight,
            }

    def reset_peak(self) -> None:
        with self._lock:
            self.peak_in_flight = self.in_flight

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(
                self,
            ) -> None:  # GET /stats (?reset: peak from now): counters for another process
                if "reset" in self.path:
                    stand_in.reset_peak()
                data = json.dumps(stand_in.stats()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, payload = stand_in._answer(json.loads(raw) if raw else {})
                stand_in.statuses.append(status)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:  # keep test output clean
                return

        return Handler

    def __enter__(self) -> StandInEmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def main() -> None:
    """Serve in a process of its own (so its JSON work does not share the client's GIL):
    ``python -m deepsearcher.testing.embedding_server --latency 0.2 --port 8765``."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with StandInEmbeddingServer(args.latency, args.dim, args.port) as server:
        print(server.url, flush=True)
        server._thread.join()


if __name__ == "__main__":
    main()
