"""Clients that misbehave on purpose: key guessing is braked, slow or idle connections are closed
after the header deadline, oversized headers are refused. A real server on loopback, raw sockets."""

from __future__ import annotations

import logging
import socket
import time

import httpx
import pytest
import yaml

from deepsearcher.config import Configuration
from deepsearcher.server.app import create_app
from deepsearcher.server.runner import ServerThread
from deepsearcher.server.throttle import KeyGuessThrottle

KEY = "the-right-key-0123456789"  # strong (auth.is_strong): a lockout of its address does not hold it
WEAK_KEY = "password1"  # a word: held by a lockout like any guess


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("abuse")
    settings = {
        "provide_settings": {"vector_db": {"provider": "Milvus", "config": {"uri": str(base / "milvus.db")}}},
        "server": {"api_keys": [{"key": KEY}, {"key": WEAK_KEY}], "data_dir": str(base / "data"), "header_timeout": 1},
    }
    path = base / "config.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    with ServerThread(create_app(Configuration(path))) as server:
        yield server


def test_guessing_keys_is_answered_429_after_a_few_tries(running, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="deepsearcher.server")
    with httpx.Client(base_url=running.url, timeout=30) as client:
        codes = [
            client.get("/v1/collections", headers={"Authorization": f"Bearer wrong-{i}"}).status_code for i in range(30)
        ]
        assert codes[:10] == [401] * 10 and set(codes[10:]) == {429}
        locked = client.get("/v1/collections", headers={"Authorization": f"Bearer {WEAK_KEY}"})
        assert locked.status_code == 429 and 0 < int(locked.headers["Retry-After"]) <= 60  # a guessable key waits
        assert "Too many wrong API keys" in locked.json()["error"]
        owner = client.get("/v1/collections", headers={"Authorization": f"Bearer {KEY}"})
        assert owner.status_code == 200  # the owner of a strong key is not held by others' failures
        client.cookies.clear()  # the owner's device token (its cookie) is not the guesser's
        again = client.get("/v1/collections", headers={"Authorization": "Bearer wrong-after-the-owner"})
        assert again.status_code == 429  # and guessing is still held
    lines = [record.getMessage() for record in caplog.records if "wrong API keys from" in record.getMessage()]
    assert len(lines) == 1 and "refusing it for 60 s" in lines[0]  # one line for the lockout, not one per guess


def test_the_owner_of_a_short_key_passes_a_lockout_of_its_address_with_its_device_token(running) -> None:
    """OWASP's device cookies: a right key earns a signed token; with it, the owner is counted apart
    from its address, so others' guesses there do not lock it out, and its own guesses lock only it."""
    device = "X-DeepSearcher-Device"
    transport = httpx.HTTPTransport(local_address="127.0.0.2")  # an address of its own: its own lockout
    with httpx.Client(base_url=running.url, timeout=30, transport=transport) as client:

        def get(key: str, **headers: str) -> httpx.Response:
            client.cookies.clear()  # only the token a request names explicitly
            return client.get("/v1/collections", headers={"Authorization": f"Bearer {key}", **headers})

        earned = get(WEAK_KEY)
        token = earned.headers[device]
        assert earned.status_code == 200 and f"deepsearcher_device={token};" in earned.headers["set-cookie"]
        assert "HttpOnly" in earned.headers["set-cookie"] and "SameSite=Strict" in earned.headers["set-cookie"]
        assert [get(f"wrong-{i}").status_code for i in range(11)] == [401] * 10 + [429]  # someone guesses
        assert get(WEAK_KEY).status_code == 429  # the short key alone waits with its address
        assert get(WEAK_KEY, **{device: token}).status_code == 200  # with its token it does not
        assert get(WEAK_KEY, Cookie=f"deepsearcher_device={token}").status_code == 200  # the page's cookie too
        assert get(WEAK_KEY, **{device: token[:-1] + ("0" if token[-1] != "0" else "1")}).status_code == 429
        assert get("wrong-x", **{device: "forged.token.x"}).status_code == 429  # no way around the lockout
        # guesses sent with a token are counted on the token: it is locked out, the address stays as it was
        assert [get(f"wrong-t{i}", **{device: token}).status_code for i in range(11)] == [401] * 10 + [429]
        assert get(WEAK_KEY, **{device: token}).status_code == 429


def test_a_weak_configured_key_is_named_at_start(caplog: pytest.LogCaptureFixture) -> None:
    from deepsearcher.server.auth import warn_weak_keys
    from deepsearcher.server.settings import ApiKey, ServerSettings

    caplog.set_level(logging.WARNING, logger="deepsearcher.server")
    settings = ServerSettings(api_keys=[ApiKey(KEY, name="ci"), ApiKey(WEAK_KEY, name="me"), ApiKey("a" * 30)])
    assert warn_weak_keys(settings) == ["me", "key …aaaa"]  # short, or long but one repeated character
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2 and "API key 'me'" in lines[0] and "openssl rand -hex 24" in lines[0]
    assert all(WEAK_KEY not in line for line in lines)  # named by label, never by value


def test_the_lockout_ends_doubles_and_a_right_key_resets_the_count() -> None:
    now = [1000.0]
    throttle = KeyGuessThrottle(max_failures=3, window=10, lockout=5, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.wait("a") == 0
        throttle.failed("a")
    assert throttle.wait("a") == 5 and throttle.wait("b") == 0  # one client's guesses do not lock another
    now[0] += 5.1
    assert throttle.wait("a") == 0
    for _ in range(3):
        throttle.failed("a")
    assert throttle.wait("a") == 10  # the second lockout is twice as long
    now[0] += 11
    throttle.failed("a")
    throttle.failed("a")
    throttle.succeeded("a")
    throttle.failed("a")
    throttle.failed("a")
    assert throttle.wait("a") == 0  # the right key started the count again
    now[0] += 60
    throttle.failed("a")  # the old failures fell out of the window
    assert throttle.wait("a") == 0


def _connect(running) -> socket.socket:
    return socket.create_connection(("127.0.0.1", running.port), timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
        return True, received
    except TimeoutError:
        return False, received


def test_slow_and_idle_connections_are_closed_after_the_header_deadline(running) -> None:
    slow = [_connect(running) for _ in range(20)]
    idle = [_connect(running) for _ in range(50)]
    for sock in slow:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
    started = time.monotonic()
    outcomes = [_closed_within(sock, 8) for sock in slow + idle]
    assert all(closed for closed, _ in outcomes), "a connection outlived the header deadline"
    assert time.monotonic() - started < 8
    assert b"408" in outcomes[0][1]
    for sock in slow + idle:
        sock.close()
    with httpx.Client(base_url=running.url, timeout=30) as client:  # the server still serves
        assert client.get("/health").status_code == 200


def test_oversized_headers_are_refused(running) -> None:
    sock = _connect(running)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
    closed, received = _closed_within(sock, 8)
    sock.close()
    assert closed and received.startswith(b"HTTP/1.1 431")
    with httpx.Client(base_url=running.url, timeout=30) as client:
        ordinary = client.get("/health", headers={"X-Fine": "b" * 4000})
        assert ordinary.status_code == 200
