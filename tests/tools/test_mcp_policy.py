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
