"""Device tokens: a client that once presented a right key is not locked out with its address.

The key-guessing lockout holds an address, and many people can share one (a proxy, a host). As
OWASP's "device cookies" do, a client whose key was right gets a token signed by this server
(response header `X-DeepSearcher-Device` and an HttpOnly cookie); presenting it later, it is
counted apart from its address: the failures of others there do not hold it, and its own wrong
keys lock out only the token. A guesser has no token (minting one takes a right key), so
guessing stays behind the address lockout. The signing secret lives in this process: after a
restart, the next right key gets a new token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = ["DEVICE_COOKIE", "DEVICE_HEADER", "DeviceTokens"]

DEVICE_HEADER = "X-DeepSearcher-Device"
DEVICE_COOKIE = "deepsearcher_device"
#: Longer values are not tokens of this server: not even looked at.
MAX_TOKEN_CHARS = 512


class DeviceTokens:
    """Issues and checks `label.nonce.signature` tokens bound to the key label that earned them."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def _sign(self, body: str) -> str:
        return hmac.new(self._secret, body.encode(), hashlib.sha256).hexdigest()[:32]

    def issue(self, label: str) -> str:
        encoded = base64.urlsafe_b64encode(label.encode()).decode().rstrip("=")
        body = f"{encoded}.{secrets.token_urlsafe(12)}"
        return f"{body}.{self._sign(body)}"

    def verify(self, token: str | None) -> str | None:
        """The key label `token` was issued for, or None when this server did not sign it."""
        if not token or len(token) > MAX_TOKEN_CHARS or token.count(".") != 2:
            return None
        body, _, signature = token.rpartition(".")
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        encoded = body.split(".", 1)[0]
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode(errors="replace")
