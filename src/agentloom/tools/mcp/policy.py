"""Which MCP server URLs a request may reach: a host allow/deny list, and addresses.

Every address the host name resolves to is checked: link-local (169.254.0.0/16, fe80::/10) and
cloud metadata hosts are always refused; loopback only when configured. An IPv6 address that
carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) is checked as the
IPv4 address it reaches too.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import anyio

from agentloom.config import McpSettings
from agentloom.errors import InvalidRequestError
from agentloom.frozen import frozen
from agentloom.redact import redact_url

METADATA_HOSTS = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "169.254.169.254", "100.100.100.200"}
)
_METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("100.100.100.200"), ipaddress.ip_address("fd00:ec2::254")}
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix
_COMPATIBLE = ipaddress.ip_network("::/96")  # IPv4-compatible (deprecated, RFC 4291)


@frozen
class UrlPolicy:
    allow_hosts: frozenset[str] = frozenset()  # empty: any host not denied
    deny_hosts: frozenset[str] = frozenset()
    allow_loopback: bool = False
    allow_private: bool = True
    subject: str = "MCP server"  # what the URL is for, in errors

    async def check(self, url: str, *, param: str) -> None:
        """Raise InvalidRequestError naming ``param`` unless ``url`` may be reached."""
        await self.allowed_addresses(url, param=param)

    async def allowed_addresses(self, url: str, *, param: str) -> list[IPAddress]:
        """:meth:`check`, and the addresses ``url``'s host resolved to (every one allowed): a
        caller that connects to one of them reaches what was checked, whatever the host's name
        resolves to a moment later."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
        if parts.scheme not in ("http", "https") or not host:
            raise _refused(url, "it must be an http(s) URL with a host", param, self.subject)
        problem = self._host_problem(host)
        if problem is not None:
            raise _refused(url, problem, param, self.subject)
        addresses = await _resolve(host, parts.port)
        if not addresses:
            raise _refused(url, "the host name does not resolve", param, self.subject)
        for address in addresses:
            problem = self.address_problem(address)
            if problem is not None:
                raise _refused(url, problem, param, self.subject)
        return addresses

    def _host_problem(self, host: str) -> str | None:
        if host in METADATA_HOSTS:
            return "cloud metadata hosts are never reached"
        if _matches(host, self.deny_hosts):
            return "the host is denied by the server's policy"
        if self.allow_hosts and not _matches(host, self.allow_hosts):
            return "the host is not in the server's allowed hosts"
        return None

    def address_problem(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be reached (``None``: it may); an IPv6 address that carries
        IPv4 ones is refused if any of them is."""
        for reached in (address, *embedded_ipv4(address)):
            problem = self._problem(reached)
            if problem is not None:
                return problem
        return None

    def _problem(self, address: IPAddress) -> str | None:
        if address.is_link_local or address in _METADATA_ADDRESSES:
            return "link-local and metadata addresses are never reached"
        if address.is_loopback and not self.allow_loopback:
            return "loopback addresses are not allowed by the server's policy"
        if address.is_unspecified or address.is_multicast:
            return "the address is not a unicast address"
        if address.is_private and not address.is_loopback and not self.allow_private:
            return "private addresses are not allowed by the server's policy"
        return None


async def _resolve(host: str, port: int | None) -> list[IPAddress]:
    """The addresses ``host`` resolves to, each once ([] when it does not resolve)."""
    try:
        infos = await anyio.getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))


def embedded_ipv4(address: IPAddress) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 ``address`` leads to: IPv4-mapped (``::ffff:a.b.c.d``),
    IPv4-compatible (``::a.b.c.d``), NAT64 (``64:ff9b::a.b.c.d``), 6to4 (``2002:AABB:CCDD::``)
    and Teredo (``2001::/32``: its server and its client, whose bits are inverted)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return ()
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    return ()


def mcp_policy(settings: McpSettings) -> UrlPolicy:
    return UrlPolicy(
        allow_hosts=frozenset(h.lower() for h in settings.allow_hosts),
        deny_hosts=frozenset(h.lower() for h in settings.deny_hosts),
        allow_loopback=settings.allow_loopback,
        allow_private=settings.allow_private,
    )


def _matches(host: str, patterns: frozenset[str]) -> bool:
    """``example.com`` matches itself and its subdomains."""
    return any(host == p or host.endswith("." + p) for p in patterns)


def _refused(url: str, why: str, param: str, subject: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"The {subject} URL '{redact_url(url)}' is refused: {why}.",
        param=param,
        code="invalid_value",
    )
