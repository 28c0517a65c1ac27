"""No key in any log, proxies trusted only when configured, and the web page's security headers.

The log test runs the real `deepsearcher serve` subprocess at debug level (uvicorn's access log
on) with its log file in a temp dir, sends the keys every way a client might (header, query
string, JSON body, wrong and right), and then greps everything the run wrote, stderr and log
file, for each key. The LLM is the project's scripted OpenAI-compatible server on 127.0.0.1,
with its own API key; the embedding is the hash stand-in (loading the bundled model in the
subprocess would cost seconds and logs nothing about keys).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread
from deepsearcher.server.security import PAGE_POLICY
from deepsearcher.server.settings import ServerSettings
from deepsearcher.testing import ScriptedLLMServer
from deepsearcher.testing.serve_process import free_port
from deepsearcher.types import ConfigurationError

ROOT = Path(__file__).resolve().parents[1]
ADMIN_KEY = "admin-4f1c9a7e2b6d8035c1e9"
READER_KEY = "reader-key-77"
LLM_KEY = "sk-scripted-9b2e7d41c6a8"
GUESS = "guessed-key-3f8a1c"
HASH_EMBEDDING = {"provider": "deepsearcher.testing.hash_embedding:HashEmbedding", "config": {}}


def write_config(tmp_path: Path, llm: dict | None = None, **server: object) -> Path:
    provide = {
        "embedding": HASH_EMBEDDING,
        "vector_db": {"provider": "Milvus", "config": {"uri": str(tmp_path / "milvus.db")}},
    }
    if llm is not None:
        provide["llm"] = llm
    settings = {
        "provide_settings": provide,
        "server": {"allowed_roots": [str(tmp_path)], "data_dir": str(tmp_path / "data"), **server},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def exercise(url: str, docs: Path) -> None:
    """Every way a key reaches the server, right and wrong."""
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/v1/collections", params={"api_key": ADMIN_KEY}).status_code == 401
        assert client.get("/v1/collections", params={"token": GUESS, "x": "1"}).status_code == 401
        assert client.get("/v1/collections", headers={"Authorization": f"Bearer {GUESS}"}).status_code == 401
        assert client.get("/v1/collections", headers={"Authorization": f"Basic {READER_KEY}"}).status_code == 401
        body = {"inputs": [str(docs)], "collection": "notes", "api_key": READER_KEY}
        assert client.post("/v1/load", json=body, headers=admin).status_code == 422  # an unknown field
        job = client.post("/v1/load", json={"inputs": [str(docs)], "collection": "notes"}, headers=admin).json()
        deadline = time.monotonic() + 60
        while client.get(f"/v1/jobs/{job['job_id']}", headers=admin).json()["status"] != "succeeded":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        question = {"question": "Who built the first compiler?", "agent": "naive", "collections": ["notes"]}
        answer = client.post("/v1/query", json=question, headers=admin)
        assert answer.status_code == 200, answer.text
        reader = client.get("/v1/collections", headers={"Authorization": f"Bearer {READER_KEY}"})
        assert reader.status_code == 200


def test_no_key_appears_in_any_log_line_the_server_writes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("Grace Hopper built the first compiler.", encoding="utf-8")
    log_file = tmp_path / "deepsearcher.log"
    with ScriptedLLMServer(fallback="Grace Hopper [1].") as llm:
        keys = [{"key": ADMIN_KEY}, {"key": READER_KEY}]
        config = write_config(tmp_path, llm=llm.llm_config(api_key=LLM_KEY), api_keys=keys)
        port = free_port()
        env = {
            **os.environ,
            "DEEPSEARCHER_LOG_FILE": str(log_file),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        command = [sys.executable, "-m", "deepsearcher.cli.main", "--verbose", "serve", "--port", str(port)]
        command += ["--log-level", "debug", "-c", str(config)]
        with open(tmp_path / "stderr.log", "w", encoding="utf-8") as stderr:
            server = subprocess.Popen(command, env=env, stdout=stderr, stderr=subprocess.STDOUT, text=True)
            try:
                url = f"http://127.0.0.1:{port}"
                deadline = time.monotonic() + 90
                while True:
                    assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                    try:
                        if httpx.get(url + "/health", timeout=1).status_code == 200:
                            break
                    except httpx.HTTPError:
                        time.sleep(0.2)
                exercise(url, docs)
                assert any(LLM_KEY in (request.authorization or "") for request in llm.requests)  # it was used
            finally:
                server.terminate()
                server.wait(30)
    written = (tmp_path / "stderr.log").read_text(encoding="utf-8")
    written += log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    assert "/v1/collections?api_key=[redacted]" in written  # the access log was on, and masked
    assert '"GET /v1/collections?token=[redacted]&x=1 HTTP/1.1" 401' in written
    for key in (ADMIN_KEY, READER_KEY, LLM_KEY, GUESS):
        leaks = [line for line in written.splitlines() if key in line]
        assert not leaks, (key, leaks[:3])


def test_forwarded_for_is_read_only_from_configured_proxies(tmp_path: Path) -> None:
    keys = [{"key": READER_KEY}]
    for trusted, locked_out_elsewhere in (([], True), (["127.0.0.0/8"], False)):
        config = write_config(tmp_path, api_keys=keys, trusted_proxies=trusted)
        with ServerThread(create_app(Configuration(config))) as running, httpx.Client(base_url=running.url) as client:
            for attempt in range(10):
                wrong = {"Authorization": f"Bearer wrong-{attempt}", "X-Forwarded-For": "203.0.113.9"}
                assert client.get("/v1/collections", headers=wrong).status_code == 401
            guesser = {"Authorization": f"Bearer {READER_KEY}", "X-Forwarded-For": "203.0.113.9"}
            assert client.get("/v1/collections", headers=guesser).status_code == 429  # a short key: held
            other = {"Authorization": f"Bearer {READER_KEY}", "X-Forwarded-For": "198.51.100.7"}
            status = client.get("/v1/collections", headers=other).status_code
            # untrusted: both are the proxy's address, one lockout; trusted: two clients
            assert status == (429 if locked_out_elsewhere else 200), trusted


def test_trusted_proxies_must_be_addresses() -> None:
    assert ServerSettings.from_mapping({"trusted_proxies": ["10.0.0.5", "10.1.0.0/16"]}).trusted_proxies == [
        "10.0.0.5/32",
        "10.1.0.0/16",
    ]
    with pytest.raises(ConfigurationError, match="'server.trusted_proxies' entry 'proxy.local' is not an IP"):
        ServerSettings.from_mapping({"trusted_proxies": ["proxy.local"]})


def test_the_web_page_sends_its_security_headers(tmp_path: Path) -> None:
    with ServerThread(create_app(Configuration(write_config(tmp_path)))) as running, httpx.Client() as client:
        page = client.get(running.url + "/")
        assert page.headers["content-security-policy"] == PAGE_POLICY and "frame-ancestors 'none'" in PAGE_POLICY
        assert page.headers["x-content-type-options"] == "nosniff" and page.headers["x-frame-options"] == "DENY"
        api = client.get(running.url + "/health")
        assert api.headers["x-content-type-options"] == "nosniff" and "content-security-policy" not in api.headers


def test_masking_keeps_every_log_call_working(caplog: pytest.LogCaptureFixture) -> None:
    """A template's own %s next to a secret name, literal %%, an exception as the message, a traceback."""
    from deepsearcher.utils import redaction

    redaction.install()
    redaction.register_secrets([LLM_KEY])
    logger = logging.getLogger("deepsearcher.test_redaction")
    with caplog.at_level(logging.INFO, logger="deepsearcher.test_redaction"):
        logger.info("retrying with token=%s after %d s", GUESS, 2)
        logger.info("100%% of %s", "it")
        logger.warning(ValueError(f"provider refused {LLM_KEY}"))
        try:
            raise RuntimeError(f"GET https://api.example/v1?api_key={GUESS}")
        except RuntimeError:
            logger.exception("call failed")
    lines = [logging.Formatter("%(message)s").format(record) for record in caplog.records]
    assert lines[:3] == ["retrying with token=[redacted] after 2 s", "100% of it", "provider refused [redacted]"]
    assert "api_key=[redacted]" in lines[3] and GUESS not in "\n".join(lines) and LLM_KEY not in "\n".join(lines)
