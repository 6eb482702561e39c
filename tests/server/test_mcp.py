"""The mcp tool end to end: the official openai client against the app, the app against a real
MCP server from the ``mcp`` package over HTTP (Streamable HTTP and HTTP+SSE)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import Response as SDKResponse
from starlette.applications import Starlette

from agentloom.config import McpSettings, Settings
from agentloom.inference.scripted import ScriptedModel, delay, tool_call
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve_async
from agentloom.tools.mcp.schema import normalise
from tests.plugins.server import make_settings
from tests.server.mcp_support import McpServers, serving


@pytest.fixture(scope="module")
def mcp_servers() -> Iterator[McpServers]:
    with serving() as servers:
        yield servers


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    policy = McpSettings(allow_loopback=True, connect_timeout=3.0, call_timeout=3.0)
    return base.model_copy(update={"mcp": policy})


def _mcp(url: str, **extra: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "calc", "server_url": url, **extra}


def _never(url: str, **extra: Any) -> dict[str, Any]:
    return _mcp(url, require_approval="never", **extra)


async def test_the_model_calls_an_mcp_tool(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("add", {"a": 2, "b": 3}))
    scripted.add_turn("It is 5.")

    response = await client.responses.create(
        model=backend.model, input="2 + 3?", tools=[_never(mcp_servers.streamable_url)]
    )

    listing, call, message = response.output
    assert listing.type == "mcp_list_tools"
    assert listing.server_label == "calc"
    assert {t.name for t in listing.tools} == {"add", "explode", "distance", "delete_everything"}
    assert call.type == "mcp_call"
    assert call.id.startswith("mcp_")
    assert (call.name, call.output, call.status, call.error) == ("add", "5", "completed", None)
    assert json.loads(call.arguments) == {"a": 2, "b": 3}
    assert message.type == "message"
    offered = {t["function"]["name"] for t in backend.requests[0]["tools"]}
    assert offered == {"add", "explode", "distance", "delete_everything"}
    told = backend.requests[1]["messages"][-1]
    assert (told["role"], told["content"]) == ("tool", "5")


async def test_the_stream_shows_listing_and_call_events(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("add", {"a": 1, "b": 1}))
    scripted.add_turn("2")

    stream = await client.responses.create(
        model=backend.model,
        input="1 + 1?",
        tools=[_never(mcp_servers.streamable_url)],
        stream=True,
    )
    events = [event async for event in stream]

    kinds = [e.type for e in events if "mcp" in e.type]
    assert kinds == [
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
    ]
    added = [e.item.type for e in events if e.type == "response.output_item.added"]
    assert added[:2] == ["mcp_list_tools", "mcp_call"]
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))
    final = events[-1]
    assert final.type == "response.completed"
    assert [i.type for i in final.response.output] == ["mcp_list_tools", "mcp_call", "message"]


async def test_a_client_going_away_closes_the_mcp_session(
    app: Starlette, backend: FakeBackend, scripted: ScriptedModel, mcp_servers: McpServers
) -> None:
    scripted.add_turn(delay(1.5), "too late")
    mcp_servers.recorder.methods.clear()

    async with (
        serve_async(app, lifespan=False) as base_url,
        openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0) as remote,
    ):
        stream = await remote.responses.create(
            model=backend.model, input="hi", tools=[_never(mcp_servers.streamable_url)], stream=True
        )
        async for event in stream:
            if event.type == "response.mcp_list_tools.completed":
                response_id = event.sequence_number
                break
        await stream.close()
        assert mcp_servers.recorder.open  # the session's GET stream is open
        for _ in range(100):
            if not mcp_servers.recorder.open:
                break
            await asyncio.sleep(0.02)

    assert response_id
    assert mcp_servers.recorder.open == 0  # every connection to the MCP server was closed


async def test_a_tool_error_is_on_the_item_and_told_to_the_model(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("explode"))
    scripted.add_turn("It failed, sorry.")

    response = await client.responses.create(
        model=backend.model, input="go", tools=[_never(mcp_servers.streamable_url)]
    )

    call = response.output[1]
    assert call.type == "mcp_call"
    assert call.status == "failed"
    assert call.error is not None
    assert call.error.type == "mcp_tool_execution_error"
    assert response.status == "completed"
    told = backend.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert told["content"].startswith("Error: the MCP tool 'explode' failed")


async def test_an_unreachable_server_fails_the_listing_not_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("No tools today.")

    response = await client.responses.create(
        model=backend.model, input="hi", tools=[_never("http://127.0.0.1:9/mcp")]
    )

    listing, message = response.output
    assert listing.type == "mcp_list_tools"
    assert listing.error
    assert "could not be reached" in listing.error
    assert listing.tools == []
    assert message.type == "message"
    assert response.status == "completed"
    assert "tools" not in backend.requests[0]


async def test_the_sse_transport_is_used_when_streamable_http_is_refused(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("add", {"a": 20, "b": 22}))
    scripted.add_turn("42")

    response = await client.responses.create(
        model=backend.model, input="20 + 22?", tools=[_never(mcp_servers.sse_url)]
    )

    listing, call, _ = response.output
    assert listing.type == "mcp_list_tools"
    assert listing.error is None
    assert call.type == "mcp_call"
    assert call.output == "42"


async def test_allowed_tools_filter_the_listing_and_the_offer(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn("ok")
    url = mcp_servers.streamable_url

    response = await client.responses.create(
        model=backend.model,
        input="hi",
        tools=[
            _never(url, allowed_tools={"read_only": True}),
            _never(url, server_label="b", allowed_tools=["explode"]),
        ],
    )

    first, second, _ = response.output
    assert [t.name for t in first.tools] == ["add"]
    assert [t.name for t in second.tools] == ["explode"]
    assert {t["function"]["name"] for t in backend.requests[0]["tools"]} == {"add", "explode"}


async def test_a_name_taken_by_another_server_is_prefixed_with_its_label(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("b__add", {"a": 4, "b": 4}))
    scripted.add_turn("8")
    url = mcp_servers.streamable_url

    response = await client.responses.create(
        model=backend.model,
        input="4 + 4?",
        tools=[
            _never(url, allowed_tools=["add"]),
            _never(mcp_servers.sse_url, server_label="b", allowed_tools=["add"]),
        ],
    )

    assert {t["function"]["name"] for t in backend.requests[0]["tools"]} == {"add", "b__add"}
    call = response.output[2]
    assert call.type == "mcp_call"
    assert (call.server_label, call.name, call.output) == ("b", "add", "8")


async def test_schemas_with_refs_are_inlined_for_the_backend(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(
        tool_call("distance", {"origin": {"x": 0, "y": 0}, "target": {"x": 2, "y": 3}})
    )
    scripted.add_turn("5")

    response = await client.responses.create(
        model=backend.model, input="?", tools=[_never(mcp_servers.streamable_url)]
    )

    offered = {t["function"]["name"]: t["function"] for t in backend.requests[0]["tools"]}
    schema = json.dumps(offered["distance"]["parameters"])
    assert "$ref" not in schema
    assert "$defs" not in schema
    assert offered["distance"]["parameters"]["properties"]["origin"]["properties"]["x"]
    assert offered["explode"]["parameters"]["properties"] == {}
    assert response.output[1].output == "5.0"


def test_normalise_wraps_non_object_schemas() -> None:
    schema, wrapped = normalise({"type": "array", "items": {"type": "string"}})
    assert wrapped
    assert schema == {
        "type": "object",
        "properties": {"input": {"type": "array", "items": {"type": "string"}}},
        "required": ["input"],
    }
    assert normalise({})[0] == {"type": "object", "properties": {}}


async def test_the_authorization_reaches_the_server_and_is_never_echoed_or_stored(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn("ok")
    mcp_servers.recorder.headers.clear()
    tool = _never(
        mcp_servers.streamable_url, authorization="sekrit-token", headers={"X-Key": "hidden-key"}
    )

    reply = await http.post(
        "/responses", json={"model": backend.model, "input": "hi", "tools": [tool]}
    )

    assert reply.status_code == 200, reply.text
    seen = mcp_servers.recorder.headers
    assert seen
    assert all(h.get("authorization") == "Bearer sekrit-token" for h in seen)
    assert all(h.get("x-key") == "hidden-key" for h in seen)
    body = reply.json()
    SDKResponse.model_validate(body, strict=True)
    assert body["tools"][0]["server_label"] == "calc"
    stored = await http.get(f"/responses/{body['id']}")
    for text in (reply.text, stored.text):
        assert "sekrit" not in text
        assert "hidden-key" not in text
    assert "authorization" not in stored.json()["tools"][0]


async def test_an_approved_call_runs_in_the_next_response(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("delete_everything"))
    scripted.add_turn("Done: everything is deleted.")
    tool = _mcp(
        mcp_servers.streamable_url,
        require_approval={"never": {"read_only": True}},
    )

    first = await client.responses.create(model=backend.model, input="wipe it", tools=[tool])

    _listing, request = first.output
    assert first.status == "completed"
    assert request.type == "mcp_approval_request"
    assert (request.name, request.server_label) == ("delete_everything", "calc")
    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "previous_response_id": first.id,
            "tools": [tool],
            "input": [
                {
                    "type": "mcp_approval_response",
                    "approval_request_id": request.id,
                    "approve": True,
                }
            ],
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    SDKResponse.model_validate(body, strict=True)
    second = SDKResponse.model_validate(body)

    call, message = second.output  # the earlier listing is reused: no new mcp_list_tools
    assert call.type == "mcp_call"
    assert (call.approval_request_id, call.output, call.status) == (
        request.id,
        "deleted",
        "completed",
    )
    assert message.type == "message"
    told = backend.requests[1]["messages"][-1]
    assert (told["role"], told["content"]) == ("tool", "deleted")
    assert len(backend.requests) == 2


async def test_a_denied_call_is_told_to_the_model(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    scripted.add_turn(tool_call("add", {"a": 1, "b": 2}))
    scripted.add_turn("I will not add then.")
    tool = _mcp(mcp_servers.streamable_url, require_approval="always")

    first = await client.responses.create(model=backend.model, input="1+2", tools=[tool])
    request = first.output[-1]
    assert request.type == "mcp_approval_request"
    second = await client.responses.create(
        model=backend.model,
        previous_response_id=first.id,
        tools=[tool],
        input=[
            {
                "type": "mcp_approval_response",
                "approval_request_id": request.id,
                "approve": False,
                "reason": "not now",
            }
        ],
    )

    assert [i.type for i in second.output] == ["message"]
    last = backend.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert "denied" in last["content"]
    assert "not now" in last["content"]


async def test_an_unknown_approval_request_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, mcp_servers: McpServers
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model,
            tools=[_mcp(mcp_servers.streamable_url)],
            input=[
                {"type": "mcp_approval_response", "approval_request_id": "mcpr_x", "approve": True}
            ],
        )
    assert caught.value.param == "input[0].approval_request_id"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/mcp", "metadata"),
        ("http://metadata.google.internal/mcp", "metadata"),
        ("http://[fe80::1]/mcp", "link-local"),
        ("ftp://example.com/mcp", "http(s)"),
    ],
)
async def test_refused_urls_are_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, url: str, why: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="hi", tools=[{"type": "function", "name": "f"}, _never(url)]
        )
    assert caught.value.param == "tools[1].server_url"
    assert why in str(caught.value)


async def _configure(client: openai.AsyncOpenAI, body: dict[str, Any]) -> dict[str, Any]:
    reply = await client.post("/mcp_connectors", cast_to=httpx2.Response, body=body)
    assert reply.status_code == 200, reply.text
    made: dict[str, Any] = reply.json()
    return made


async def test_a_configured_connector_is_used_by_id_and_its_credentials_never_shown(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    mcp_servers: McpServers,
) -> None:
    secret = "sk-connector-secret"
    body = {
        "id": "connector_googledrive",
        "server_url": mcp_servers.streamable_url,
        "description": "The calculator",
        "headers": {"X-Team": "blue"},
        "authorization": secret,
    }
    made = await _configure(client, body)
    assert made == {
        "object": "mcp_connector",
        "id": "connector_googledrive",
        "created_at": made["created_at"],
        "server_url": mcp_servers.streamable_url,
        "description": "The calculator",
        "header_names": ["X-Team"],
        "has_authorization": True,
    }
    scripted.add_turn(tool_call("add", {"a": 2, "b": 3}))
    scripted.add_turn("It is 5.")
    mcp_servers.recorder.headers.clear()
    tool = {"type": "mcp", "server_label": "calc", "connector_id": "connector_googledrive"}

    response = await client.responses.create(
        model=backend.model,
        input="2 + 3?",
        tools=[cast("Any", {**tool, "require_approval": "never"})],
    )

    listing, call, _ = response.output
    assert listing.type == "mcp_list_tools"
    assert (call.type, call.output) == ("mcp_call", "5")
    sent = mcp_servers.recorder.headers
    assert sent
    assert all(h["authorization"] == f"Bearer {secret}" and h["x-team"] == "blue" for h in sent)
    echoed = response.tools[0].model_dump(exclude_none=True)
    assert echoed["connector_id"] == "connector_googledrive"
    assert "server_url" not in echoed
    listed = await client.get("/mcp_connectors", cast_to=httpx2.Response)
    read = await client.get("/mcp_connectors/connector_googledrive", cast_to=httpx2.Response)
    stored = await client.responses.retrieve(response.id)
    for shown in (listed.text, read.text, stored.model_dump_json()):
        assert secret not in shown
        assert "blue" not in shown


async def test_an_unknown_or_deleted_connector_is_a_400(
    client: openai.AsyncOpenAI, backend: FakeBackend, mcp_servers: McpServers
) -> None:
    await _configure(client, {"id": "connector_dropbox", "server_url": mcp_servers.streamable_url})
    deleted = await client.delete("/mcp_connectors/connector_dropbox", cast_to=httpx2.Response)
    assert deleted.json() == {
        "object": "mcp_connector.deleted",
        "id": "connector_dropbox",
        "deleted": True,
    }
    with pytest.raises(openai.NotFoundError):
        await client.get("/mcp_connectors/connector_dropbox", cast_to=httpx2.Response)

    for tool in (
        {"type": "mcp", "server_label": "g", "connector_id": "connector_dropbox"},
        {
            "type": "mcp",
            "server_label": "g",
            "connector_id": "connector_dropbox",
            "server_url": "https://x",
        },
    ):
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(
                model=backend.model, input="hi", tools=[cast("Any", tool)]
            )
        assert caught.value.param == "tools[0].connector_id"
