"""Network safety: which addresses a crawler may connect to, checked at every hop and connect."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

from deepsearcher.loader.web_crawler._errors import URLRefusedError
from deepsearcher.types.errors import DeepSearcherError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance-metadata endpoints hand out cloud credentials: refused even with allow_private_network.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)

ALLOW_HINT = "set allow_private_network: true under provide_settings.web_crawler.config to crawl it"


class ResolutionError(DeepSearcherError):
    """A host name could not be resolved."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"DNS lookup failed for {host}: {reason}")
        self.host = host
        self.reason = f"DNS lookup failed for {host} ({reason})"


NAT64 = ipaddress.ip_network("64:ff9b::/96")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and reaches: mapped (::ffff:a.b.c.d), 6to4 (2002::/16),
    Teredo (2001::/32, its client's), NAT64 (64:ff9b::/96) and the old IPv4-compatible form (::a.b.c.d)."""
    found = [address for address in (ip.ipv4_mapped, ip.sixtofour) if address is not None]
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if ip in NAT64 or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def address_kind(ip: IPAddress) -> str | None:
    """Why `ip` is not a public address (e.g. "a loopback address"), or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        for inner in embedded_ipv4(ip):
            kind = address_kind(inner)
            if kind is not None:
                return kind  # what the IPv4 address it carries is: where the packets would go
    return _own_kind(ip)


def _own_kind(ip: IPAddress) -> str | None:
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "a non-public address"
    return None


def is_metadata(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and any(inner in METADATA_ADDRESSES for inner in embedded_ipv4(ip)):
        return True
    return ip in METADATA_ADDRESSES


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


class AddressPolicy:
    """Resolves hosts once per crawl and refuses addresses the crawler must not reach.

    The addresses it vetted are the ones connected to (see GuardedBackend), so a host
    cannot resolve to a public address for the check and a private one for the request.
    """

    def __init__(self, allow_private_network: bool = False, dns_timeout: float = 10.0) -> None:
        self.allow_private_network = allow_private_network
        self.dns_timeout = dns_timeout
        self._cache: dict[tuple[str, int], asyncio.Future[list[str]]] = {}

    def _check(self, host: str, ip: IPAddress) -> None:
        if is_metadata(ip):
            raise URLRefusedError(host, f"refused: {ip} is a cloud metadata address (never crawled)")
        if self.allow_private_network:
            return
        kind = address_kind(ip)
        if kind is not None:
            text = f"{ip} is {kind}" if host == str(ip) else f"{host} resolves to {ip}, which is {kind}"
            raise URLRefusedError(
                host,
                f"refused: {text}; private networks are not crawled ({ALLOW_HINT})",
            )

    def check_literal(self, host: str) -> None:
        """Checks that need no DNS: metadata host names and IP-literal hosts."""
        name = host.lower().rstrip(".")
        if name in METADATA_HOSTS:
            raise URLRefusedError(host, f"refused: {name} is a cloud metadata host (never crawled)")
        ip = _literal(name)
        if ip is not None:
            self._check(str(ip), ip)

    async def resolve(self, host: str, port: int) -> list[str]:
        """Vetted IP addresses of `host`; raises URLRefusedError or ResolutionError."""
        self.check_literal(host)
        literal = _literal(host)
        if literal is not None:
            return [str(literal)]
        key = (host.lower().rstrip("."), port)
        future = self._cache.get(key)
        if future is None:
            future = asyncio.ensure_future(self._lookup(key[0], port))
            self._cache[key] = future
        return list(await asyncio.shield(future))

    async def _lookup(self, host: str, port: int) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM),
                timeout=self.dns_timeout,
            )
        except asyncio.TimeoutError:
            raise ResolutionError(host, f"no answer within {self.dns_timeout:g} s") from None
        except (socket.gaierror, UnicodeError, OSError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise ResolutionError(host, reason) from None
        addresses: list[str] = []
        for info in infos:
            ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            self._check(host, ip)  # any forbidden answer refuses the host
            if str(ip) not in addresses:
                addresses.append(str(ip))
        if not addresses:
            raise ResolutionError(host, "no addresses")
        return addresses


def guard_transport(transport: object, policy: AddressPolicy) -> bool:
    """Make `transport` (an httpx.AsyncHTTPTransport) connect only to addresses `policy` vetted.

    Returns False when this httpx version does not expose its connection pool's network
    backend; the crawler then still checks every hop before sending the request.
    """
    try:
        import httpcore
    except ImportError:  # pragma: no cover - httpx depends on httpcore
        return False
    pool = getattr(transport, "_pool", None)
    inner = getattr(pool, "_network_backend", None)
    if inner is None or not isinstance(inner, httpcore.AsyncNetworkBackend):
        return False

    backend: httpcore.AsyncNetworkBackend = inner

    class GuardedBackend(httpcore.AsyncNetworkBackend):
        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):  # type: ignore[no-untyped-def]
            addresses = await policy.resolve(host, port)
            error: Exception | None = None
            for address in addresses:
                try:
                    return await inner.connect_tcp(
                        address,
                        port,
                        timeout=timeout,
                        local_address=local_address,
                        socket_options=socket_options,
                    )
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    error = exc
            assert error is not None
            raise error

        async def connect_unix_socket(self, path, timeout=None, socket_options=None):  # type: ignore[no-untyped-def]
            raise URLRefusedError(path, "refused: unix sockets are not crawled")

        async def sleep(self, seconds: float) -> None:
            await backend.sleep(seconds)

    pool._network_backend = GuardedBackend()  # type: ignore[union-attr]
    return True
