"""What a web page on another site may do to a server on this machine: nothing.

A keyless server trusts whoever reaches it, which on loopback should be only this machine's own
programs. Two browser tricks reach it from any web page, and both are refused here (as Jupyter
and the local LLM servers do):
- DNS rebinding: a page on `attacker.example` re-points its own name at 127.0.0.1 and talks to
  the server as "same origin". Its requests carry `Host: attacker.example`, so a keyless server
  answers only the Host names it is known by: localhost, loopback addresses, the address it is
  bound to, and `server.allowed_hosts`.
- Cross-site requests (CSRF): a page may POST a form or a fetch to http://127.0.0.1:8000. Browsers
  say where it comes from (`Origin`, `Sec-Fetch-Site`), so a state-changing request (anything but
  GET, HEAD, OPTIONS) from another origin is refused, with or without API keys; programs such as
  curl or an SDK send neither header and are not affected.
Both answer 403 with a message that says which setting would allow it.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deepsearcher.server.device_tokens import DEVICE_COOKIE, DEVICE_HEADER
from deepsearcher.server.settings import ServerSettings, is_loopback

__all__ = ["PAGE_POLICY", "OriginGuard", "SecurityHeaders", "configured_secrets"]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class OriginGuard:
    """Pure ASGI middleware applying the Host and Origin rules of the module docstring."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        reason = self.refusal(scope, headers)
        if reason is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": reason}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def refusal(self, scope: Scope, headers: dict[str, str]) -> str | None:
        """Why this request is refused, or None."""
        host = headers.get("host", "")
        if not self.settings.auth_enabled and not self.host_allowed(host, scope):
            return (
                f"This server does not answer to the host name '{_hostname(host)[:100]}': a keyless server "
                "answers only its loopback names (a page elsewhere could otherwise reach it by DNS rebinding). "
                "Add the name to server.allowed_hosts, or configure server.api_keys."
            )
        if scope.get("method", "GET") in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and origin != "null" and self.origin_allowed(origin, host):
            return None
        fetch_site = headers.get("sec-fetch-site")
        if origin is None and fetch_site in (None, "same-origin", "none"):
            return None  # not a browser, or the browser says the request is the server's own page
        where = origin if origin not in (None, "null") else f"a {fetch_site or 'sandboxed'} page"
        return (
            f"Refused a {scope.get('method')} request from {where[:100]}: only this server's own web page may "
            "change things from a browser. Add the page's origin to server.allowed_origins to allow it."
        )

    def host_allowed(self, host: str, scope: Scope) -> bool:
        name = _hostname(host)
        if not name:
            return True  # HTTP/1.0 without Host: no browser sends that
        if is_loopback(name) or name in self.settings.allowed_hosts:
            return True
        bound = scope.get("server")
        return bound is not None and _same_address(name, str(bound[0]))

    def origin_allowed(self, origin: str, host: str) -> bool:
        parts = urlsplit(origin)
        origin = origin.lower().rstrip("/")
        if origin in self.settings.allowed_origins:
            return True
        return bool(parts.hostname) and (parts.netloc.lower() == host.lower())  # the page this server served


def _hostname(host: str) -> str:
    """'localhost' of 'localhost:8000', '::1' of '[::1]:8000'."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _same_address(name: str, bound: str) -> bool:
    try:
        return ipaddress.ip_address(name) == ipaddress.ip_address(bound)
    except ValueError:
        return name == bound.lower()


#: The web page loads only its own script, style and API (no inline code, no framing): what an
#: injected tag or a page that frames it to trick clicks could do is nothing.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_EVERY_RESPONSE = ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"))
_PAGE_ONLY = ((b"content-security-policy", PAGE_POLICY.encode()), (b"x-frame-options", b"DENY"))


class SecurityHeaders:
    """Pure ASGI middleware: `nosniff` and `no-referrer` on every response; on the web page (`/` and
    `/static/`) also the content security policy above and X-Frame-Options (for older browsers).
    /docs keeps its own needs (Swagger UI's assets), so the page policy stays off it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        extra = _EVERY_RESPONSE + (_PAGE_ONLY if path == "/" or path.startswith("/static/") else ())

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {bytes(name).lower() for name, _ in message.get("headers", [])}
                added = [(name, value) for name, value in extra if name not in present]
                added += _device_token_headers(scope)
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, with_headers)


def _device_token_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The device token a right key just earned (auth.require_principal put it in the request
    state), as a header for programs and an HttpOnly cookie for the web page."""
    token = (scope.get("state") or {}).get("device_token")
    if not token:
        return []
    cookie = f"{DEVICE_COOKIE}={token}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Strict"
    return [(DEVICE_HEADER.lower().encode(), token.encode()), (b"set-cookie", cookie.encode())]


#: Setting names that hold a secret (api_key, aws_secret_access_key, session_token, password...),
#: not names that merely mention one (primary_key_field, max_tokens).
_SECRET_NAME = re.compile(
    r"(?:api|access|secret|private|account)[_-]?key$|apikey|secret|password|passwd|token$|credential"
)


def configured_secrets(config: object, settings: ServerSettings) -> Iterator[str]:
    """Every secret the server's config holds: its API keys, and each provider setting whose name
    says it is one (api_key, aws_secret_access_key, token...), for the log redaction to mask."""
    yield from (api_key.key for api_key in settings.api_keys)
    stack: list[object] = [getattr(config, "provide_settings", None) or {}]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for name, value in node.items():
                if isinstance(value, str) and _SECRET_NAME.search(str(name).lower()):
                    yield value
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
