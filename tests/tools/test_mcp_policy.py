"""The MCP URL policy: hosts, and every resolved address."""

from __future__ import annotations

import ipaddress

import pytest

from agentloom.errors import InvalidRequestError
from agentloom.tools.mcp.policy import UrlPolicy


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.216.34", True),
        ("10.1.2.3", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("169.254.169.254", False),
        ("169.254.10.1", False),
        ("fe80::1", False),
        ("::ffff:169.254.169.254", False),
        ("::ffff:127.0.0.1", False),
        ("fd00:ec2::254", False),
        ("0.0.0.0", False),
    ],
)
def test_addresses(address: str, allowed: bool) -> None:
    problem = UrlPolicy().address_problem(ipaddress.ip_address(address))
    assert (problem is None) is allowed


# The metadata address (169.254.169.254) and a loopback one (127.0.0.1) in each IPv6 form that
# carries an IPv4 address, and a public address (93.184.216.34) in each, which passes.
CARRIED = {
    "IPv4-mapped": ("::ffff:169.254.169.254", "::ffff:127.0.0.1", "::ffff:93.184.216.34"),
    "IPv4-compatible": ("::169.254.169.254", "::127.0.0.1", "::93.184.216.34"),
    "NAT64": ("64:ff9b::a9fe:a9fe", "64:ff9b::127.0.0.1", "64:ff9b::93.184.216.34"),
    "6to4": ("2002:a9fe:a9fe::1", "2002:7f00:1::1", "2002:5db8:d822::1"),
    # server 65.54.227.120, then the flags and port; the client's bits are inverted
    "Teredo": (
        "2001:0:4136:e378:8000:63bf:5601:5601",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "2001:0:4136:e378:8000:63bf:a247:27dd",
    ),
}


@pytest.mark.parametrize("form", list(CARRIED))
def test_ipv4_carried_in_ipv6_is_checked_as_ipv4(form: str) -> None:
    metadata, loopback, public = (ipaddress.ip_address(a) for a in CARRIED[form])
    policy = UrlPolicy()
    assert "metadata" in (policy.address_problem(metadata) or "")
    assert "loopback" in (policy.address_problem(loopback) or "")
    assert policy.address_problem(public) is None
    # loopback allowed: the metadata address is still refused
    allowed = UrlPolicy(allow_loopback=True)
    assert allowed.address_problem(loopback) is None
    assert allowed.address_problem(metadata) is not None


async def test_a_nat64_metadata_url_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        await UrlPolicy().check("http://[64:ff9b::a9fe:a9fe]/latest", param="server_url")
    assert "metadata" in caught.value.message


def test_loopback_and_private_follow_the_settings() -> None:
    loopback = ipaddress.ip_address("127.0.0.1")
    private = ipaddress.ip_address("192.168.1.5")
    assert UrlPolicy(allow_loopback=True).address_problem(loopback) is None
    assert UrlPolicy(allow_private=False).address_problem(private) is not None
    assert UrlPolicy(allow_loopback=True).address_problem(ipaddress.ip_address("169.254.1.1"))


@pytest.mark.parametrize(
    ("policy", "url", "why"),
    [
        (UrlPolicy(deny_hosts=frozenset({"evil.test"})), "https://api.evil.test/mcp", "denied"),
        (UrlPolicy(allow_hosts=frozenset({"good.test"})), "https://other.test/mcp", "allowed"),
        (UrlPolicy(), "https://metadata.google.internal/x", "metadata"),
        (UrlPolicy(), "file:///etc/passwd", "http(s)"),
        (UrlPolicy(), "http://localhost:8000/mcp", "loopback"),
    ],
)
async def test_refused_urls_name_the_param(policy: UrlPolicy, url: str, why: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        await policy.check(url, param="tools[2].server_url")
    assert caught.value.param == "tools[2].server_url"
    assert why in caught.value.message


async def test_an_allowed_host_passes() -> None:
    policy = UrlPolicy(allow_hosts=frozenset({"localhost"}), allow_loopback=True)
    await policy.check("http://localhost:8000/mcp", param="tools[0].server_url")
