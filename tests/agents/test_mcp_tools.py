"""MCP servers' tools as agent tools, against real MCP servers from the ``mcp`` package: over
HTTP (``mcp_support``) and a declared stdio server started as a subprocess."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentloom.agents.base import AgentContext
from agentloom.agents.builders import ToolEnvironment, build_tools
from agentloom.agents.tools.base import Tool, ToolError
from agentloom.agents.tools.mcp import McpAgentTool, McpToolsError, mcp_tools
from agentloom.config import McpServerSettings, McpSettings, Settings
from agentloom.errors import InvalidRequestError
from tests.server.mcp_support import McpServers, serving

SCRIPT = '''
import os, sys
from mcp.server.mcpserver import MCPServer

with open(sys.argv[1], "a") as pids:
    pids.write(f"{os.getpid()}\\n")
server = MCPServer("stdio-calc")
counter = {"n": 0}


@server.tool()
def bump() -> int:
    """Count the calls of this process."""
    counter["n"] += 1
    return counter["n"]


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "(unset)")


@server.tool()
def hidden() -> str:
    """Not allowed by the declaration."""
    return "should not run"


server.run()
'''
TOKEN_ENV = "AGENTLOOM_TEST_AGENT_MCP_TOKEN"
LIMITS = McpSettings(connect_timeout=10.0, call_timeout=5.0)


@pytest.fixture(scope="module")
def servers() -> Iterator[McpServers]:
    with serving() as served:
        yield served


def _by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {tool.name: tool for tool in tools}


async def _close(tools: list[Tool]) -> None:
    for tool in tools:
        await tool.aclose()


async def test_each_mcp_tool_becomes_an_agent_tool(servers: McpServers) -> None:
    tools = await mcp_tools(servers.streamable_url, LIMITS)
    try:
        found = _by_name(tools)
        assert set(found) == {"add", "explode", "distance", "delete_everything"}
        assert found["add"].description == "Add two integers."
        schema = found["distance"].parameters
        assert schema["type"] == "object"
        assert "$defs" not in schema  # references inlined for model backends
        assert await found["add"].call({"a": 2, "b": 3}, AgentContext()) == "5"
        point = {"origin": {"x": 0, "y": 0}, "target": {"x": 3, "y": -4}}
        assert await found["distance"].call(point, AgentContext()) == "7.0"
    finally:
        await _close(tools)


async def test_calls_from_concurrent_tasks_share_one_connection(servers: McpServers) -> None:
    tools = await mcp_tools(servers.streamable_url, LIMITS)
    add = _by_name(tools)["add"]
    try:
        sums = await asyncio.gather(*(add.call({"a": n, "b": n}, AgentContext()) for n in range(8)))
    finally:
        await _close(tools)

    assert sums == [str(2 * n) for n in range(8)]
    assert servers.recorder.open == 0


async def test_a_failing_tool_is_a_tool_error(servers: McpServers) -> None:
    tools = await mcp_tools(servers.streamable_url, LIMITS)
    try:
        with pytest.raises(ToolError, match="failed: Error executing tool explode"):
            await _by_name(tools)["explode"].call({}, AgentContext())
        with pytest.raises(ToolError, match="'add' failed"):
            await _by_name(tools)["add"].call({"a": "x"}, AgentContext())
    finally:
        await _close(tools)


async def test_a_closed_session_reconnects_on_the_next_call(servers: McpServers) -> None:
    tools = await mcp_tools(servers.streamable_url, LIMITS)
    add = _by_name(tools)["add"]
    await add.aclose()
    try:
        assert await add.call({"a": 1, "b": 1}, AgentContext()) == "2"
    finally:
        await _close(tools)


async def test_an_unreachable_server_cannot_be_listed() -> None:
    with pytest.raises(McpToolsError, match="could not be listed"):
        await mcp_tools("http://127.0.0.1:9/mcp", McpSettings(connect_timeout=2.0))


async def test_a_declared_http_server_gets_its_headers_and_token(
    servers: McpServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "tok-55")
    remote = McpServerSettings(
        label="remote",
        url=servers.streamable_url,
        headers={"X-Team": "blue"},
        authorization_env=TOKEN_ENV,
        allowed_tools=["add"],
        description="the test server",
    )
    tools = await mcp_tools(remote, LIMITS)
    try:
        (add,) = tools
        assert add.description == "Add two integers.\n(MCP server: the test server)"
        assert await add.call({"a": 20, "b": 22}, AgentContext()) == "42"
    finally:
        await _close(tools)

    sent = servers.recorder.headers[-1]
    assert sent["authorization"] == "Bearer tok-55"
    assert sent["x-team"] == "blue"


def _stdio_settings(tmp_path: Path) -> Settings:
    script = tmp_path / "calc_server.py"
    script.write_text(SCRIPT)
    calc = McpServerSettings(
        label="calc",
        command=sys.executable,
        args=[str(script), str(tmp_path / "pids")],
        env={"GREETING": "hello"},
        allowed_tools=["bump", "env"],
    )
    return Settings(mcp=LIMITS.model_copy(update={"servers": [calc]}))


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_a_declared_stdio_server_is_addressed_by_label(tmp_path: Path) -> None:
    env = ToolEnvironment(data_dir=tmp_path, settings=_stdio_settings(tmp_path))
    tools = await asyncio.to_thread(build_tools, ["mcp:calc"], env)
    found = _by_name(tools)
    try:
        assert set(found) == {"bump", "env"}  # allowed_tools bounds the listing
        assert all(isinstance(tool, McpAgentTool) for tool in tools)
        assert await found["bump"].call({}, AgentContext()) == "1"
        assert await found["bump"].call({}, AgentContext()) == "2"  # one process, kept
        assert await found["env"].call({"name": "GREETING"}, AgentContext()) == "hello"
    finally:
        await _close(tools)

    (pid,) = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert not _alive(pid)


def test_an_unknown_label_is_refused(tmp_path: Path) -> None:
    env = ToolEnvironment(data_dir=tmp_path, settings=_stdio_settings(tmp_path))

    with pytest.raises(InvalidRequestError, match="no MCP server is declared with label 'nope'"):
        build_tools(["mcp:nope"], env)
