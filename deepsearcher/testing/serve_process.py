"""`deepsearcher serve` as a real subprocess on a free loopback port, for tests and benchmarks.

Crash, SIGTERM and restart checks need the server in its own process (an in-process
TestClient cannot be killed); this starts it, waits for /health within a deadline, and
says why when it never comes up (the process exited: its stderr; still starting: the last
connection error).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """One `deepsearcher serve -c CONFIG` process; `port` may be reused by a restart."""

    def __init__(
        self, config: Path, port: int | None = None, env: dict[str, str] | None = None, log_level: str = "warning"
    ) -> None:
        self.config = config
        self.log_level = log_level
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env or dict(os.environ)
        self.process: subprocess.Popen[str] | None = None
        # A file, not a pipe: a pipe nobody reads would block the server once it filled.
        self._log = tempfile.TemporaryFile(mode="w+", prefix="deepsearcher-serve-")

    def start(self, deadline_s: float = 90.0) -> ServeProcess:
        import httpx

        command = [sys.executable, "-m", "deepsearcher.cli.main", "serve", "--port", str(self.port)]
        command += ["--log-level", self.log_level, "-c", str(self.config)]
        # uvicorn writes its access log to stdout: kept with the rest, in the file
        self.process = subprocess.Popen(command, env=self.env, stdout=self._log, stderr=self._log, text=True)
        deadline = time.monotonic() + deadline_s
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"deepsearcher serve exited with {self.process.returncode}: {self._stderr()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).json()["status"] == "ok":
                    return self
            except httpx.HTTPError as exc:
                last_error = exc  # not up yet: named below if it never comes up
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"deepsearcher serve did not answer /health within {deadline_s:.0f} s: {last_error!r}")

    def _stderr(self) -> str:
        return self.log_text()[-2000:]

    def log_text(self) -> str:
        """Everything the server wrote to stderr so far (its log, uvicorn's access lines at log_level info)."""
        self._log.seek(0)
        return self._log.read()

    def stop(self, timeout_s: float = 15.0) -> None:
        """SIGTERM, then SIGKILL if it has not left within `timeout_s`."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout_s)
