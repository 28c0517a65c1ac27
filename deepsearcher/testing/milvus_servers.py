"""Real Milvus servers on loopback for tests and benchmarks, each from its own cached venv.

- `Milvus235Server`: Milvus 2.3.5 standalone (Go/C++ Milvus with embedded etcd) from the
  PyPI package ``milvus==2.3.5``; no BM25 functions, no hybrid_search.
- `LiteEngineServer`: milvus-lite 2.5.1's native engine serving gRPC on a TCP port; BM25
  and hybrid_search, but no collection properties.

Each venv is built once under ``~/.cache/deepsearcher-test/venvs`` (``DEEPSEARCHER_TEST_CACHE``
moves it) by ``python -m venv`` + pip, under a file lock so parallel runs build it once.
A server gets a free port, a data dir in tmp, a ready-wait with a deadline, and is stopped
by its process group id. Anything that goes wrong raises `ServerStartError` with the reason
and the log tail, so a test run fails instead of skipping.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

logger = logging.getLogger(__name__)

MILVUS_235 = "milvus==2.3.5"
LITE_251 = "milvus-lite==2.5.1"
# Without these the 2.3.5 standalone advertises a non-loopback address to its own components.
_COMPONENTS = (
    "rootCoord",
    "proxy",
    "queryCoord",
    "queryNode",
    "indexNode",
    "dataCoord",
    "dataNode",
)


class ServerStartError(RuntimeError):
    """A test server could not be built or started; the message says why and what to do."""


def cache_dir() -> Path:
    return Path(os.environ.get("DEEPSEARCHER_TEST_CACHE") or Path.home() / ".cache" / "deepsearcher-test")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_venv(requirement: str, no_deps: bool = False, timeout: float = 900) -> Path:
    """The venv holding `requirement`, built on first use and reused afterwards."""
    root = cache_dir() / "venvs"
    root.mkdir(parents=True, exist_ok=True)
    venv = root / requirement.replace("==", "-")
    marker = venv / ".deepsearcher-complete"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run may be building it right now
        if marker.exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a half-built venv from an interrupted run
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                *(["--no-deps"] if no_deps else []),
                requirement,
            ],
        ]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                raise ServerStartError(
                    f"Building the test venv for {requirement} timed out after {timeout:.0f}s: {step}"
                ) from exc
            if done.returncode != 0:
                raise ServerStartError(
                    f"Building the test venv for {requirement} failed ({' '.join(step)} exited {done.returncode}): "
                    f"{(done.stderr or done.stdout).strip()[-1500:]}. It needs PyPI; the venv goes to {venv}."
                )
        marker.write_text(requirement, encoding="utf-8")
    return venv


def _site_packages(venv: Path) -> Path:
    matches = sorted((venv / "lib").glob("python3*/site-packages"))
    if not matches:
        raise ServerStartError(f"No site-packages in {venv}; delete it and run again to rebuild it.")
    return matches[0]


class _Server:
    """A server process in its own process group, with its log in its data dir."""

    name = "server"
    start_timeout = 120.0

    def __init__(self) -> None:
        self.data_dir = Path(tempfile.mkdtemp(prefix=f"deepsearcher-{self.name}-"))
        self.port = free_port()
        self.log_path = self.data_dir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _command(self) -> tuple[list[str], dict[str, str], Path]:
        raise NotImplementedError

    def _ready(self) -> bool:
        raise NotImplementedError

    def start(self) -> _Server:
        command, env, cwd = self._command()
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        try:
            while not self._ready():
                code = self.process.poll()
                if code is not None:
                    raise ServerStartError(f"{self.name} exited with code {code} while starting. {self._tail()}")
                if time.monotonic() > deadline:
                    raise ServerStartError(f"{self.name} was not ready after {self.start_timeout:.0f}s. {self._tail()}")
                time.sleep(0.2)
        except BaseException:
            self.stop(keep_log=True)  # the log stays for the reader of the error
            raise
        return self

    def _answers(self) -> bool:
        """A real client call succeeds: the port can be open before the gRPC service takes
        calls (the first connection to the milvus-lite engine was refused with "Too many pings")."""
        from pymilvus import MilvusClient

        from deepsearcher.vector_db._milvus_capabilities import muted_rpc_errors

        try:
            with muted_rpc_errors():
                client = MilvusClient(uri=self.uri, timeout=5)
                try:
                    client.list_collections()
                finally:
                    client.close()
        except Exception:  # noqa: BLE001 - not ready yet; the caller's deadline bounds the wait
            return False
        return True

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _tail(self) -> str:
        return f"Log ({self.log_path}): {self.log_text()[-2000:].strip() or '(empty)'}"

    def stop(self, keep_log: bool = False) -> None:
        """Stop the whole process group (the server and what it spawned), then remove the data dir."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=5)  # then SIGKILL: the data dir goes next, see _reap_group
            except ProcessLookupError:
                logger.debug("milvus test server %s had already exited", process.pid)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        if process is not None:
            _reap_group(process.pid)
        if self._log is not None:
            self._log.close()
            self._log = None
        if not keep_log:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _reap_group(pgid: int, grace: float = 3.0) -> None:
    """Wait for the rest of a process group (children still shutting down), then SIGKILL it.
    A short grace: the data dir is deleted next, so nothing is gained by a clean shutdown; with 15 s
    here and for the launcher, the last test of each pytest run took 15.5 s to tear down (the
    session's servers stopping: a fresh 2.3.5 stops in 1.5 s, one that has served the suite did not)."""
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            os.killpg(pgid, 0)
            time.sleep(0.2)
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return


class Milvus235Server(_Server):
    """Milvus 2.3.5 standalone; ready when its launcher prints its banner (10-50 s)."""

    name = "milvus-2.3.5"
    start_timeout = 180.0

    def _command(self) -> tuple[list[str], dict[str, str], Path]:
        venv = server_venv(MILVUS_235)
        command = [
            str(venv / "bin" / "milvus-server"),
            "--data",
            str(self.data_dir / "milvus"),
            "--proxy-port",
            str(self.port),
        ]
        for component in _COMPONENTS:
            command += ["--extra-config", f"{component}.ip=127.0.0.1"]
        return (
            command,
            dict(os.environ, PYTHONUNBUFFERED="1"),
            self.data_dir,
        )  # the banner is the ready sign

    def _ready(self) -> bool:
        log = self.log_text()
        if "Milvus server already stopped" in log or "started timeout" in log:
            raise ServerStartError(f"{self.name} did not start. {self._tail()}")
        self._check_engine()
        return "Ctrl+C to exit" in log and self._answers()

    def _check_engine(self) -> None:
        """The launcher keeps polling for 3 minutes after the milvus binary died: read its own log."""
        engine_log = self.data_dir / "milvus" / "logs" / "milvus-stderr.log"
        try:
            text = engine_log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        if "panic:" in text:
            first = text[text.index("panic:") :].splitlines()[0]
            hint = ""
            if "GetEmbedEtcdClient" in text:
                hint = (
                    " Its embedded etcd did not start: its peer port 2380 is fixed, so only one Milvus 2.3.5"
                    " standalone can run on a machine at a time; stop the other one (or wait for it) and retry."
                )
            raise ServerStartError(f"{self.name} crashed while starting ({first}).{hint} Engine log: {engine_log}")


class LiteEngineServer(_Server):
    """milvus-lite 2.5.1's engine binary serving one database over TCP; listens in ~0.1 s."""

    name = "milvus-lite-2.5.1-tcp"
    start_timeout = 30.0

    def _command(self) -> tuple[list[str], dict[str, str], Path]:
        lib = _site_packages(server_venv(LITE_251, no_deps=True)) / "milvus_lite" / "lib"
        env = dict(os.environ, LD_LIBRARY_PATH=str(lib))
        return (
            [
                str(lib / "milvus"),
                str(self.data_dir / "x.db"),
                f"127.0.0.1:{self.port}",
                "ERROR",
            ],
            env,
            self.data_dir,
        )

    def _ready(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", self.port)) != 0:
                return False
        return self._answers()


SERVERS: dict[str, type[_Server]] = {
    Milvus235Server.name: Milvus235Server,
    LiteEngineServer.name: LiteEngineServer,
}


class ServerPool:
    """Servers started on first request and kept for the pool's life (one pytest session):
    each kind starts at most once; a failed start is remembered and re-raised."""

    def __init__(self) -> None:
        self._servers: dict[str, _Server] = {}
        self._failures: dict[str, ServerStartError] = {}

    def get(self, name: str) -> _Server:
        if name in self._failures:
            raise self._failures[name]
        if name not in self._servers:
            try:
                self._servers[name] = SERVERS[name]().start()
            except ServerStartError as exc:
                self._failures[name] = exc
                raise
        return self._servers[name]

    def stop_all(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
