"""Bearer API keys and the collections each key may see.

Without configured keys every request is allowed (the server then only listens on
loopback, see `check_bind_allowed`). With keys, every API route needs
`Authorization: Bearer KEY`: 401 without a key or with a wrong one, 403 for a
collection outside the key's set; such collections never appear in listings and are
never routed to.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from deepsearcher.server.device_tokens import DEVICE_COOKIE, DEVICE_HEADER
from deepsearcher.server.errors import APIError
from deepsearcher.server.settings import ApiKey, ServerSettings, is_loopback
from deepsearcher.vector_db.base import normalize_collection_name

logger = logging.getLogger("deepsearcher.server")
bearer = HTTPBearer(auto_error=False, description="An API key from server.api_keys in the config file.")
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="deepsearcher"'}


@dataclass(frozen=True)
class Principal:
    """Who is calling: a key label (or 'local' without auth) and its collections (None: all)."""

    label: str
    collections: frozenset[str] | None = None

    @property
    def authorized_collections(self) -> set[str] | None:
        """What the agents' CollectionRouter may choose from (None: everything)."""
        return set(self.collections) if self.collections is not None else None

    def may_use(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def require(self, collection: str) -> str:
        """`collection` normalized, or 403 when this key may not use it."""
        name = normalize_collection_name(collection)
        if not self.may_use(name):
            raise APIError(403, f"This API key may not use collection '{name}'.")
        return name

    def require_all(self, collections: Iterable[str]) -> list[str]:
        return [self.require(collection) for collection in collections]


LOCAL = Principal(label="local")


#: A key at least this long, of at least STRONG_KEY_DISTINCT different characters, counts as a random
#: token: guessing it is hopeless at any rate, so a lockout of its address does not apply to it.
STRONG_KEY_CHARS = 24
STRONG_KEY_DISTINCT = 10


def is_strong(secret: str) -> bool:
    """Whether `secret` looks like a random token (`openssl rand -hex 24`), not a word someone may guess."""
    return len(secret) >= STRONG_KEY_CHARS and len(set(secret)) >= STRONG_KEY_DISTINCT


def presents_strong_key(settings: ServerSettings, authorization: str | None) -> bool:
    """Whether `authorization` carries one of the strong configured keys (constant-time, each compared).

    Only strong keys are looked at: during a lockout a wrong guess learns nothing a guess of a
    random 24-character token could use, while short keys stay behind the throttle."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return False
    presented = token.strip().encode()
    found = False
    for candidate in settings.api_keys:
        if is_strong(candidate.key) and hmac.compare_digest(candidate.key.encode(), presented):
            found = True
    return found


def warn_weak_keys(settings: ServerSettings) -> list[str]:
    """Log one warning per configured key that a guesser could find (short or repetitive); the labels."""
    weak = [api_key.label for api_key in settings.api_keys if not is_strong(api_key.key)]
    for label in weak:
        logger.warning(
            "API key '%s' is shorter than %d characters or repetitive: guesses at it are slowed, not prevented, "
            "and a client holding it waits out lockouts of its address until it has a device token. "
            "Use a random key: openssl rand -hex 24",
            label,
            STRONG_KEY_CHARS,
        )
    return weak


def find_key(settings: ServerSettings, presented: str) -> ApiKey | None:
    """The configured key equal to `presented` (constant-time comparison of every key)."""
    found = None
    for candidate in settings.api_keys:
        if hmac.compare_digest(candidate.key.encode(), presented.encode()):
            found = candidate
    return found


def authenticate(settings: ServerSettings, authorization: str | None) -> Principal:
    if not settings.auth_enabled:
        return LOCAL
    if not authorization:
        raise APIError(
            401,
            "Missing API key: send the header 'Authorization: Bearer <key>'.",
            _CHALLENGE,
        )
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise APIError(401, "Malformed Authorization header: expected 'Bearer <key>'.", _CHALLENGE)
    key = find_key(settings, token.strip())
    if key is None:
        raise APIError(401, "Invalid API key.", _CHALLENGE)
    return Principal(label=key.label, collections=key.collections)


async def require_principal(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
) -> Principal:
    """FastAPI dependency of every protected route."""
    settings: ServerSettings = request.app.state.deepsearcher.settings
    if not settings.auth_enabled:
        # Defence in depth for apps run by another ASGI server (`deepsearcher serve`
        # already refuses to bind): without keys, only a loopback listener is served.
        listener = request.scope.get("server")
        if listener and listener[0] and not is_loopback(str(listener[0])):
            raise APIError(
                403,
                f"This server listens on {listener[0]} without API keys; add server.api_keys to the config "
                "file or listen on 127.0.0.1.",
            )
    throttle = request.app.state.deepsearcher.throttle
    authorization = request.headers.get("authorization")
    # A device token counts its holder apart from its address (deepsearcher/server/device_tokens.py).
    device = request.headers.get(DEVICE_HEADER) or request.cookies.get(DEVICE_COOKIE)
    device_label = throttle.devices.verify(device) if settings.auth_enabled else None  # its key's label
    address = request.client.host if request.client else "unknown"
    # the throttle's key for a token, and how its log names it: a digest, never the token itself
    client = f"device token #{hashlib.sha256(str(device).encode()).hexdigest()[:12]}" if device_label else address
    if settings.auth_enabled and not presents_strong_key(settings, authorization):
        # the owner of a strong key is never held by the failures of others at the same address
        wait = throttle.wait(client)
        if wait > 0:
            who = "this device token" if device_label else client
            raise APIError(
                429,
                f"Too many wrong API keys from {who}: try again in {math.ceil(wait)} s.",
                {"Retry-After": str(math.ceil(wait))},
            )
    try:
        principal = authenticate(settings, authorization)
    except APIError:
        if authorization:  # a key was given, and it is wrong (no key at all is no guess)
            throttle.failed(client)
        raise
    if settings.auth_enabled:
        throttle.succeeded(client)
        if device_label != principal.label:  # security.SecurityHeaders sends it back
            request.state.device_token = throttle.devices.issue(principal.label)
    request.state.principal = principal
    return principal
