"""Every outbound operation has a deadline (issue 36): a server that takes the request and never
answers it costs its deadline, then the server's answer names what timed out, and other
requests are served meanwhile. Real sockets on loopback (:mod:`tests.faults.silent`), the app
over a real socket, deadlines of about a second."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from agentloom.config import (
    McpSettings,
    SearchSourceSettings,
    Settings,
    WebhookSettings,
    WebSearchSettings,
)
from agentloom.inference.scripted import ScriptedModel, stall, text, tool_call
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.faults.silent import Mode, Silent, silent_server
from tests.faults.support import eventually, sse_events
from tests.plugins.server import make_settings

BOUND = 40.0  # seconds: an exchange still running after this has hung (generous: a loaded CI host
# answered the stalled request past 15 s once, its 3 s deadline met but the process starved)
DEADLINE = 3.0  # seconds: every deadline here (an ordinary request takes ~0.05 s, cold ~1 s)


@pytest.fixture
async def search() -> AsyncIterator[Silent]:
    """The web search provider: a SearXNG that never answers."""
    async with silent_server() as silent:
        yield silent


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path, search: Silent) -> Settings:
    """Every deadline ``DEADLINE``; the provider's socket timeout long (only its deadlines
    end a stalled answer)."""
    base = make_settings(backend, database_url, timeout=30.0, files_directory=tmp_path / "files")
    [provider] = base.providers
    deadlines = {"first_byte_timeout": DEADLINE, "chunk_timeout": DEADLINE}
    web = SearchSourceSettings(provider="searxng", base_url=search.url, timeout=DEADLINE)
    return base.model_copy(
        update={
            "providers": [provider.model_copy(update=deadlines)],
            "mcp": McpSettings(
                allow_loopback=True, connect_timeout=DEADLINE, call_timeout=DEADLINE
            ),
            "web_search": WebSearchSettings(live=web),
            "webhooks": WebhookSettings(allow_loopback=True, timeout=DEADLINE, retry_delays=[]),
        }
    )


@pytest.fixture
async def http(live_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=live_url, timeout=BOUND) as client:
        yield client


async def _served_meanwhile(
    http: httpx2.AsyncClient, model: str, silent: Silent, stalled: asyncio.Task[Any]
) -> None:
    """Once ``silent`` took the ``stalled`` request's call, an ordinary request is answered
    while the stalled one waits out its deadline."""
    await asyncio.wait_for(silent.taken.wait(), BOUND)
    reply = await http.post("/responses", json={"model": model, "input": "Hi"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"][0]["content"][0]["text"] == "Ordinary."
    assert not stalled.done()  # still waiting on its silent server


MCP_FAULTS: list[tuple[Mode, str]] = [
    ("silent", "a Streamable HTTP server that takes the request and never answers"),
    ("sse_elsewhere", "an SSE endpoint event naming another origin, then silence"),
    ("sse_no_endpoint", "an SSE server that never sends its endpoint event"),
]


@pytest.mark.parametrize("mode", [mode for mode, _ in MCP_FAULTS], ids=[w for _, w in MCP_FAULTS])
async def test_a_silent_mcp_server_fails_its_listing_naming_the_deadline(
    mode: Mode, backend: FakeBackend, scripted: ScriptedModel, http: httpx2.AsyncClient
) -> None:
    scripted.add_turns("Ordinary.", "No tools today.")
    async with silent_server(mode, "/mcp") as silent:
        tool = {"type": "mcp", "server_label": "slow", "server_url": silent.url}
        body: dict[str, Any] = {"model": backend.model, "input": "Hi", "tools": [tool]}
        stalled = asyncio.create_task(http.post("/responses", json=body))
        await _served_meanwhile(http, backend.model, silent, stalled)
        reply = await asyncio.wait_for(stalled, BOUND)

    assert reply.status_code == 200, reply.text
    listing, message = reply.json()["output"]
    assert listing["type"] == "mcp_list_tools"
    assert listing["error"] == (
        f"the MCP server at {silent.url} did not answer initialize within {DEADLINE:g} s"
    )
    assert message["content"][0]["text"] == "No tools today."


STALLS = [
    ("after its first chunk", [text("Hel"), stall(30)], "went silent mid-answer for", "Hel"),
    ("before any chunk", [stall(30)], "sent nothing within", None),
]


@pytest.mark.parametrize(("where", "parts", "said", "kept"), STALLS, ids=[s[0] for s in STALLS])
async def test_a_stalled_backend_fails_the_response_naming_the_deadline(
    where: str,
    parts: list[Any],
    said: str,
    kept: str | None,
    backend: FakeBackend,
    scripted: ScriptedModel,
    http: httpx2.AsyncClient,
) -> None:
    scripted.add_turn(*parts)
    scripted.add_turn("Ordinary.")
    body = {"model": backend.model, "input": "Hi", "stream": True}
    reply = await _stalled_beside_an_ordinary_one(http, backend, body)
    failed = sse_events(reply.text)[-1]
    assert failed["type"] == "response.failed"
    field = "chunk_timeout" if kept else "first_byte_timeout"
    assert failed["response"]["error"]["message"] == (
        f"the inference backend at {backend.base_url} {said} {DEADLINE:g} s"
        f" ([[providers]] {field} of 'fake')"
    )
    texts = [part["text"] for item in failed["response"]["output"] for part in item["content"]]
    assert texts == ([kept] if kept else [])


async def _stalled_beside_an_ordinary_one(
    http: httpx2.AsyncClient, backend: FakeBackend, body: dict[str, Any]
) -> httpx2.Response:
    """The answer to ``body``, whose call stalls: an ordinary request made once the backend has
    it is answered while it still waits out its deadline."""
    stalled = asyncio.create_task(http.post("/responses", json=body))
    await _backend_called(backend)
    ordinary = await http.post("/responses", json={"model": backend.model, "input": "Hi"})
    assert not stalled.done()
    assert ordinary.json()["output"][0]["content"][0]["text"] == "Ordinary."
    return await asyncio.wait_for(stalled, BOUND)


async def _backend_called(backend: FakeBackend) -> None:
    async def called() -> bool:
        return bool(backend.requests)

    await eventually(called, "the backend to be called", BOUND)


async def test_a_silent_web_search_provider_fails_the_call_naming_the_deadline(
    backend: FakeBackend, scripted: ScriptedModel, http: httpx2.AsyncClient, search: Silent
) -> None:
    scripted.add_turn(tool_call("web_search", {"query": "kettles"}))
    scripted.add_turns("Ordinary.", "Search is down.")
    body = {"model": backend.model, "input": "?", "tools": [{"type": "web_search"}]}
    stalled = asyncio.create_task(http.post("/responses", json=body))
    await _served_meanwhile(http, backend.model, search, stalled)
    reply = await asyncio.wait_for(stalled, BOUND)

    assert reply.status_code == 200, reply.text
    call, message = reply.json()["output"]
    assert (call["type"], call["status"]) == ("web_search_call", "failed")
    assert message["content"][0]["text"] == "Search is down."
    told = backend.requests[-1]["messages"][-1]["content"]
    assert told == (
        f"Error: the web search failed: the SearXNG instance at {search.url} did not answer"
        f" within {DEADLINE:g} s ([web_search] timeout)"
    )


async def test_a_silent_webhook_receiver_is_an_error_naming_the_deadline(
    backend: FakeBackend, scripted: ScriptedModel, http: httpx2.AsyncClient
) -> None:
    scripted.add_turn("Ordinary.")
    async with silent_server() as receiver:
        made = await http.post(
            "/webhook_endpoints",
            json={"name": "slow", "url": receiver.url, "event_types": ["response.completed"]},
        )
        assert made.status_code == 200, made.text
        sent = {"event_type": "response.completed"}
        path = f"/webhook_endpoints/{made.json()['id']}/test"
        stalled = asyncio.create_task(http.post(path, json=sent))
        await _served_meanwhile(http, backend.model, receiver, stalled)
        reply = await asyncio.wait_for(stalled, BOUND)

    assert reply.status_code == 502
    assert reply.json()["error"]["message"] == (
        f"The webhook endpoint could not be reached: the webhook endpoint at {receiver.url}"
        f" did not answer within {DEADLINE:g} s ([webhooks] timeout)"
    )


@pytest.fixture(scope="module")
def hanging_tool() -> Iterator[str]:
    """A real MCP server (Streamable HTTP) whose one tool never returns."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("agentloom-hanging")

    @server.tool()
    async def wait() -> str:
        """Waits for ever."""
        await anyio.sleep_forever()
        return "never"

    with serve(server.streamable_http_app()) as base:
        yield base.removesuffix("/v1") + "/mcp"


async def test_an_mcp_tool_that_never_returns_fails_its_call_naming_the_deadline(
    backend: FakeBackend, scripted: ScriptedModel, http: httpx2.AsyncClient, hanging_tool: str
) -> None:
    scripted.add_turn(tool_call("wait", {}))
    scripted.add_turns("Ordinary.", "It hung.")
    tool = {"type": "mcp", "server_label": "hangs", "server_url": hanging_tool}
    body = {
        "model": backend.model,
        "input": "Wait",
        "tools": [{**tool, "require_approval": "never"}],
    }
    reply = await _stalled_beside_an_ordinary_one(http, backend, body)
    listing, call, message = reply.json()["output"]
    assert listing["tools"][0]["name"] == "wait"
    assert (call["type"], call["status"]) == ("mcp_call", "failed")
    assert call["error"]["message"] == (
        f"the MCP server at {hanging_tool} did not answer the call of 'wait' within {DEADLINE:g} s"
    )
    assert message["content"][0]["text"] == "It hung."
