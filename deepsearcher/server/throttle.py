"""A brake on guessing API keys: after a few wrong keys from one client, it waits.

Keys are long random tokens, so guessing one is hopeless, but only while guesses are slow: a
client that sends `max_failures` wrong keys within `window` seconds is answered 429 (with
Retry-After) for `lockout` seconds, doubling with each lockout up to `max_lockout`, whatever key
it sends meanwhile. The server log gets one line per lockout, not one per guess.

A lockout holds an address, and many people can share one (a proxy, a host): a request that
carries a strong configured key (`auth.is_strong`: a random token no one guesses) is let through
a lockout, so the owner of such a key is never refused for failures they did not make; every
other key stays behind it. The owner of a short key is let through too once it has a device
token (`device_tokens`: earned by a right key, counted apart from its address). Behind a reverse
proxy, `server.trusted_proxies` makes the address the client's own (from X-Forwarded-For)
instead of the proxy's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from deepsearcher.server.device_tokens import DeviceTokens

__all__ = ["KeyGuessThrottle"]

logger = logging.getLogger("deepsearcher.server")


@dataclass
class _Client:
    failures: deque[float] = field(default_factory=deque)
    locked_until: float = 0.0
    lockouts: int = 0
    refused: int = 0  # requests answered 429 during the current lockout


class KeyGuessThrottle:
    """Wrong-key counts per client address (see the module docstring)."""

    def __init__(
        self,
        max_failures: int = 10,
        window: float = 60.0,
        lockout: float = 60.0,
        max_lockout: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.lockout = lockout
        self.max_lockout = max_lockout
        self.clock = clock
        self._clients: dict[str, _Client] = {}
        self._lock = threading.Lock()
        #: Tokens that count a client apart from its address (see deepsearcher/server/device_tokens.py).
        self.devices = DeviceTokens()

    def wait(self, client: str) -> float:
        """Seconds `client` must wait before its key is looked at (0: go ahead)."""
        if self.max_failures <= 0:
            return 0.0
        with self._lock:
            state = self._clients.get(client)
            if state is None:
                return 0.0
            left = state.locked_until - self.clock()
            if left > 0:
                state.refused += 1
                return left
            return 0.0

    def failed(self, client: str) -> None:
        """Record a wrong key from `client`; lock it out when it has sent too many."""
        if self.max_failures <= 0:
            return
        now = self.clock()
        with self._lock:
            state = self._clients.setdefault(client, _Client())
            state.failures.append(now)
            while state.failures and state.failures[0] < now - self.window:
                state.failures.popleft()
            if len(state.failures) < self.max_failures:
                return
            seconds = min(self.lockout * 2**state.lockouts, self.max_lockout)
            logger.warning(
                "%d wrong API keys from %s within %g s (%d requests refused during its last lockout): "
                "refusing it for %g s",
                len(state.failures),
                client,
                self.window,
                state.refused,
                seconds,
            )
            state.locked_until, state.lockouts, state.refused = now + seconds, state.lockouts + 1, 0
            state.failures.clear()
            if len(self._clients) > 10_000:  # many clients: forget those with nothing pending
                self._clients = {key: value for key, value in self._clients.items() if value.locked_until > now}

    def succeeded(self, client: str) -> None:
        """A right key: the client's count of wrong ones starts again (a lockout in force stays)."""
        with self._lock:
            state = self._clients.get(client)
            if state is not None and state.locked_until <= self.clock():
                del self._clients[client]
