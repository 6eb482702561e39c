"""``agentloom ask`` / ``chat`` failing through the installed entry point: unknown names and an
unreachable backend end the process with one line on stderr, exit code 1, no traceback."""

from __future__ import annotations

import socket

import pytest

from agentloom.testing.backend import FakeBackend
from tests.cli_support import connect, run_cli


def test_unknown_names_fail_in_one_line(backend: FakeBackend) -> None:
    agent = run_cli("ask", "--agent", "wizard", *connect(backend), "hi")
    tool = run_cli("chat", "--tools", "calculator,abacus", *connect(backend), stdin="hi\n")

    assert agent.returncode == 1
    assert agent.stdout == ""
    assert agent.stderr.startswith("agentloom: unknown agent 'wizard'; known agents: ")
    assert "orchestrator" in agent.stderr
    assert tool.returncode == 1
    assert tool.stderr.startswith("agentloom: unknown tool(s) 'abacus'; known tools: ")
    for done in (agent, tool):
        assert "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == 1
    assert backend.requests == []


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_backend_that_is_down_fails_in_one_line(closed_port: int) -> None:
    done = run_cli("ask", "--model", "m", "--base-url", f"http://127.0.0.1:{closed_port}/v1", "hi")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("agentloom: the model's endpoint failed: ")
    assert f"127.0.0.1:{closed_port}" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1
