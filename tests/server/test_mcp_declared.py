"""MCP servers declared in the configuration and named by label: a stdio server (a real
``MCPServer`` script started per response as a subprocess) and an HTTP server (the real one of
``mcp_support``) with its token taken from the environment."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from starlette.applications import Starlette

from agentloom.config import ConfigError, McpServerSettings, McpSettings, Settings, load_settings
from agentloom.inference.scripted import ScriptedModel, delay, tool_call
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from tests.plugins.server import make_settings
from tests.server.mcp_support import McpServers, serving

SCRIPT = '''
import os, sys
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

with open(sys.argv[1], "a") as pids:
    pids.write(f"{os.getpid()}\\n")
print("stdio-calc: starting up", file=sys.stderr, flush=True)
server = MCPServer("stdio-calc")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "(unset)")


@server.tool()
def delete_everything() -> str:
    """Deletes everything."""
    return "deleted"


@server.tool()
def hidden() -> str:
    """Not allowed by the declaration."""
    return "should not run"


@server.tool()
def crash() -> str:
    """The process dies mid-call."""
    os._exit(3)


server.run()
'''
TOKEN_ENV = "AGENTLOOM_TEST_MCP_TOKEN"


@pytest.fixture(scope="module")
def mcp_servers() -> Iterator[McpServers]:
    with serving() as servers:
        yield servers


@pytest.fixture
def pid_file(tmp_path: Path) -> Path:
    return tmp_path / "pids"


@pytest.fixture
def settings(
    backend: FakeBackend,
    database_url: str,
    tmp_path: Path,
    pid_file: Path,
    mcp_servers: McpServers,
) -> Settings:
    script = tmp_path / "calc_server.py"
    script.write_text(SCRIPT)
    stdio = McpServerSettings(
        label="calc",
        description="a calculator on stdio",
        command=sys.executable,
        args=[str(script), str(pid_file)],
        env={"GREETING": "hello"},
        cwd=tmp_path,
        allowed_tools=["add", "env", "delete_everything", "crash"],
        require_approval="never",
    )
    remote = McpServerSettings(
        label="remote",
        url=mcp_servers.streamable_url,
        headers={"X-Team": "blue"},
        authorization_env=TOKEN_ENV,
        require_approval="never",
    )
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    # loopback is refused for request URLs: the declared (loopback) servers are still reached
    broken = McpServerSettings(label="broken", command="/nonexistent/secret-dir/mcp-server")
    mcp = McpSettings(connect_timeout=10.0, call_timeout=5.0, servers=[stdio, remote, broken])
    return base.model_copy(update={"mcp": mcp})


def _pids(pid_file: Path) -> list[int]:
    return [int(line) for line in pid_file.read_text().split()] if pid_file.exists() else []


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def _gone(pids: list[int]) -> bool:
    for _ in range(250):  # the response's exit stack closes just after the reply
        if not any(_alive(pid) for pid in pids):
            return True
        await asyncio.sleep(0.02)
    return False


def _calc(**extra: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "calc", **extra}


async def test_a_declared_stdio_server_is_listed_and_called_then_stopped(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    pid_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    scripted.add_turn(tool_call("add", {"a": 2, "b": 3}))
    scripted.add_turn("It is 5.")
    caplog.set_level(logging.INFO, logger="agentloom.tools.mcp.stdio")

    response = await client.responses.create(model=backend.model, input="2+3?", tools=[_calc()])

    listing, call, message = response.output
    assert listing.type == "mcp_list_tools"
    assert listing.error is None
    assert {t.name for t in listing.tools} == {"add", "env", "delete_everything", "crash"}
    assert call.type == "mcp_call"
    assert (call.name, call.output, call.status) == ("add", "5", "completed")
    assert message.type == "message"
    offered = {t["function"]["name"]: t["function"] for t in backend.requests[0]["tools"]}
    assert "hidden" not in offered
    assert "a calculator on stdio" in offered["add"]["description"]
    pids = _pids(pid_file)
    assert len(pids) == 1
    assert await _gone(pids)
    assert "stdio-calc: starting up" in caplog.text
    assert "starting up" not in response.model_dump_json()


async def test_the_process_sees_only_its_declared_environment(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTLOOM_TEST_SECRET", "do-not-leak")
    scripted.add_turn(tool_call("env", {"name": "AGENTLOOM_TEST_SECRET"}))
    scripted.add_turn(tool_call("env", {"name": "GREETING"}))
    scripted.add_turn("done")

    response = await client.responses.create(model=backend.model, input="env", tools=[_calc()])

    secret, greeting = (item for item in response.output if item.type == "mcp_call")
    assert secret.output == "(unset)"
    assert greeting.output == "hello"


async def test_request_fields_narrow_and_override_the_declared_defaults(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("add", {"a": 1, "b": 1}))
    tool = _calc(allowed_tools=["add", "hidden"], require_approval="always")

    response = await client.responses.create(model=backend.model, input="1+1", tools=[tool])

    listing, request = response.output
    assert [t.name for t in listing.tools] == ["add"]  # "hidden": not allowed by the declaration
    assert request.type == "mcp_approval_request"  # the request's require_approval won


async def test_an_approved_call_starts_the_server_again_in_the_next_response(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    pid_file: Path,
) -> None:
    scripted.add_turn(tool_call("delete_everything"))
    scripted.add_turn("Everything is gone.")
    tool = _calc(require_approval={"never": {"read_only": True}})

    first = await client.responses.create(model=backend.model, input="wipe", tools=[tool])
    request = first.output[-1]
    assert request.type == "mcp_approval_request"
    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        tools=[tool],
        input=[
            {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
        ],
    )

    call, message = second.output  # the listing is reused; the process starts for the call
    assert call.type == "mcp_call"
    assert (call.approval_request_id, call.output) == (request.id, "deleted")
    assert message.type == "message"
    pids = _pids(pid_file)
    assert len(pids) == 2
    assert await _gone(pids)


async def test_a_server_dying_mid_call_fails_the_call_not_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, pid_file: Path
) -> None:
    scripted.add_turn(tool_call("crash"))
    scripted.add_turn("It crashed.")

    response = await client.responses.create(model=backend.model, input="crash", tools=[_calc()])

    call = response.output[1]
    assert call.type == "mcp_call"
    assert call.status == "failed"
    assert call.error is not None
    assert response.status == "completed"
    assert await _gone(_pids(pid_file))


async def test_a_client_going_away_stops_the_stdio_server(
    app: Starlette, backend: FakeBackend, scripted: ScriptedModel, pid_file: Path
) -> None:
    scripted.add_turn(delay(5.0), "too late")

    async with (
        serve_async(app, lifespan=False) as base_url,
        openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0) as remote,
    ):
        stream = await remote.responses.create(
            model=backend.model, input="hi", tools=[_calc()], stream=True
        )
        kinds = []
        async for event in stream:
            kinds.append(event.type)
            if event.type == "response.mcp_list_tools.completed":
                break
        pids = _pids(pid_file)
        assert len(pids) == 1
        assert _alive(pids[0])  # the session is open while the response runs
        await stream.close()
        assert await _gone(pids)

    assert "response.mcp_list_tools.completed" in kinds


async def test_a_declared_http_server_gets_the_token_from_the_environment(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "env-token-123")
    scripted.add_turn(tool_call("add", {"a": 20, "b": 22}))
    scripted.add_turn("42")
    mcp_servers.recorder.headers.clear()
    tool = {"type": "mcp", "server_label": "remote", "headers": {"x-extra": "1"}}

    reply = await http.post(
        "/responses", json={"model": backend.model, "input": "20+22", "tools": [tool]}
    )

    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["output"][1]["output"] == "42"
    seen = mcp_servers.recorder.headers
    assert seen
    assert all(h.get("authorization") == "Bearer env-token-123" for h in seen)
    assert all((h.get("x-team"), h.get("x-extra")) == ("blue", "1") for h in seen)
    stored = await http.get(f"/responses/{body['id']}")
    for text in (reply.text, stored.text):
        assert "env-token-123" not in text
        assert "blue" not in text
    echoed = stored.json()["tools"][0]
    assert echoed["server_label"] == "remote"
    assert "headers" not in echoed
    assert "authorization" not in echoed


@pytest.mark.parametrize(
    ("tool", "param"),
    [
        ({"type": "mcp", "server_label": "nowhere"}, "tools[0].server_label"),
        (
            {"type": "mcp", "server_label": "remote", "server_url": "https://mcp.example.com/m"},
            "tools[0].server_url",
        ),
        (
            {"type": "mcp", "server_label": "calc", "server_url": "https://mcp.example.com/m"},
            "tools[0].server_url",
        ),
    ],
)
async def test_unknown_or_redirected_labels_are_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, tool: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=backend.model, input="hi", tools=[tool])  # type: ignore[list-item]
    assert caught.value.param == param


def _config(tmp_path: Path, servers: str) -> Path:
    path = tmp_path / "agentloom.toml"
    path.write_text(servers)
    return path


def test_declared_servers_are_read_from_the_file(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        """
[[mcp.servers]]
label = "files"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
env = { LOG_LEVEL = "debug" }
allowed_tools = ["read_file"]

[[mcp.servers]]
label = "docs"
url = "https://mcp.example.com/mcp"
authorization_env = "DOCS_TOKEN"
require_approval = "never"
""",
    )

    files, docs = load_settings(path, env={}).mcp.servers

    assert (files.command, files.args, files.env) == (
        "npx",
        ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
        {"LOG_LEVEL": "debug"},
    )
    assert (docs.url, docs.authorization_env, docs.require_approval) == (
        "https://mcp.example.com/mcp",
        "DOCS_TOKEN",
        "never",
    )


@pytest.mark.parametrize(
    ("servers", "why"),
    [
        ('[[mcp.servers]]\nlabel = "x"\n', "exactly one of url or command"),
        (
            '[[mcp.servers]]\nlabel = "x"\nurl = "https://a.example/mcp"\ncommand = "srv"\n',
            "exactly one of url or command",
        ),
        (
            '[[mcp.servers]]\nlabel = "x"\nurl = "https://a.example/mcp"\n'
            '[[mcp.servers]]\nlabel = "x"\ncommand = "srv"\n',
            "labels must be unique; repeated: x",
        ),
        ('[[mcp.servers]]\nlabel = "x"\ncommand = "srv"\nheaders = { A = "b" }\n', "url servers"),
        ('[[mcp.servers]]\nlabel = "x"\nurl = "https://a.example/m"\nargs = ["a"]\n', "stdio"),
        ('[[mcp.servers]]\nlabel = "x"\nurl = "ftp://a.example/m"\n', "url"),
        ('[[mcp.servers]]\nlabel = "a b"\ncommand = "srv"\n', "label"),
    ],
)
def test_invalid_declarations_are_config_errors(tmp_path: Path, servers: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(_config(tmp_path, servers), env={})
    assert why in str(caught.value)


async def test_a_missing_command_fails_the_listing_without_showing_it(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("No tools.")

    response = await client.responses.create(
        model=backend.model, input="hi", tools=[{"type": "mcp", "server_label": "broken"}]
    )

    listing, message = response.output
    assert listing.type == "mcp_list_tools"
    assert listing.error is not None
    assert "command was not found" in listing.error
    assert "secret-dir" not in response.model_dump_json()
    assert message.type == "message"
