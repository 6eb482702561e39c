"""``GET /v1/responses/{id}/trace``: a stored response's run as a timeline, through the app and
the fake backend on SQLite and PostgreSQL: the run, its model calls, a server tool call (a real
MCP server) and guardrail checks, in start order and within the run; the exact shape; a
background response's trace once it ended; the 404s (unknown, deleted, not stored, another
project's, none recorded, not ended yet); the OpenTelemetry trace id when traces are on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from mcp.server.mcpserver import MCPServer
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentloom.config import McpSettings, Settings
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, delay, raise_error, tool_call
from agentloom.safety.settings import RulesShieldSettings, SafetySettings
from agentloom.server.app import create_app
from agentloom.storage import schema
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from agentloom.tracing import Tracing
from tests.plugins.server import BASE_URL, make_settings, running
from tests.plugins.tenants import Tenant
from tests.server.test_background import settled
from tests.server.test_compaction import compacted_on_create
from tests.server.test_errors import the_error

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

SPAN_KEYS = {"name", "kind", "start_ms", "duration_ms", "status", "attributes"}
WEATHER: Any = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": False,
}


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    safety = SafetySettings(shields=[RulesShieldSettings(id="pii", detectors=["email"])])
    mcp = McpSettings(allow_loopback=True, connect_timeout=3.0, call_timeout=3.0)
    return base.model_copy(update={"safety": safety, "mcp": mcp})


@pytest.fixture(scope="module")
def directory() -> Iterator[str]:
    """A real MCP server with one tool, ``lookup``."""
    server = MCPServer("directory")

    @server.tool()
    def lookup(name: str) -> str:
        """Look a person up."""
        return f"{name} works in accounting."

    with serve(server.streamable_http_app()) as base:
        yield base.removesuffix("/v1") + "/mcp"


def mcp_tool(url: str) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "dir", "server_url": url, "require_approval": "never"}


async def trace_of(http: httpx2.AsyncClient, response_id: str) -> dict[str, Any]:
    reply = await http.get(f"/responses/{response_id}/trace")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


async def not_found(http: httpx2.AsyncClient, response_id: str) -> dict[str, Any]:
    return the_error(await http.get(f"/responses/{response_id}/trace"), 404)


def check_shape(trace: dict[str, Any], response_id: str) -> None:
    """Exactly the documented shape: spans in start order, each within the run."""
    assert set(trace) <= {"object", "response_id", "trace_id", "started_at", "duration_ms"} | {
        "truncated",
        "spans",
    }
    assert (trace["object"], trace["response_id"], trace["truncated"]) == (
        "response.trace",
        response_id,
        False,
    )
    assert isinstance(trace["started_at"], float)
    assert isinstance(trace["duration_ms"], float)
    starts = [span["start_ms"] for span in trace["spans"]]
    assert starts == sorted(starts)
    for span in trace["spans"]:
        assert set(span) == SPAN_KEYS | ({"error"} if span["status"] == "error" else set())
        assert isinstance(span["name"], str)
        assert span["status"] in ("ok", "error")
        assert all(isinstance(v, str | int | float | bool) for v in span["attributes"].values())
        assert span["start_ms"] >= 0
        assert (
            span["start_ms"] + span["duration_ms"] <= trace["duration_ms"] + 0.002
        )  # each rounded to µs


def of_kind(trace: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [span for span in trace["spans"] if span["kind"] == kind]


async def test_a_trace_holds_the_run_model_calls_a_tool_call_and_guardrails(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
    directory: str,
) -> None:
    scripted.add_turn(tool_call("lookup", {"name": "bob"}, call_id="call_1"))
    scripted.add_turn("Bob works in accounting.")

    response = await client.responses.create(
        model=backend.model,
        input="Where does Bob work?",
        tools=[mcp_tool(directory)],
        extra_body={"guardrails": ["pii"]},
    )
    trace = await trace_of(http, response.id)

    check_shape(trace, response.id)
    assert "trace_id" not in trace  # traces are off
    run, *steps = trace["spans"]
    assert (run["name"], run["kind"], run["start_ms"]) == (
        f"invoke_agent {backend.model}",
        "response",
        0,
    )
    assert run["duration_ms"] == trace["duration_ms"]
    assert run["attributes"]["status"] == "completed"
    assert run["attributes"]["output_tokens"] == response.usage.output_tokens  # type: ignore[union-attr]
    kinds = [span["kind"] for span in steps]
    first_call, second_call = of_kind(trace, "model_call")
    (tool,) = of_kind(trace, "tool_call")
    guardrails = of_kind(trace, "guardrail")
    assert kinds[0] == "guardrail"  # the input, before the first model call
    assert first_call["start_ms"] <= tool["start_ms"] <= second_call["start_ms"]
    assert first_call["attributes"]["finish_reason"] == "tool_calls"
    assert second_call["attributes"]["finish_reason"] == "stop"
    assert first_call["attributes"]["provider"] == "fake"
    assert first_call["name"] == f"chat {backend.model}"
    assert tool["name"] == "execute_tool lookup"
    assert tool["attributes"] == {"tool_type": "mcp", "call_id": "call_1", "outcome": "completed"}
    assert {(g["name"], g["attributes"]["verdict"]) for g in guardrails} == {
        ("guardrail pii", "allowed")
    }
    roles = {g["attributes"]["role"] for g in guardrails}
    assert roles >= {"user", "assistant", "tool"}  # input, the tool's arguments and output


async def test_a_streamed_function_call_is_a_model_call_with_its_first_token(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_9"))

    stream = await client.responses.create(
        model=backend.model, input="Weather?", tools=[WEATHER], stream=True
    )
    events = [event async for event in stream]
    response_id = events[-1].response.id  # type: ignore[union-attr]
    trace = await trace_of(http, response_id)

    check_shape(trace, response_id)
    assert [span["kind"] for span in trace["spans"]] == ["response", "model_call"]
    call = trace["spans"][1]
    assert call["attributes"]["finish_reason"] == "tool_calls"
    assert 0 <= call["attributes"]["time_to_first_token_ms"] <= call["duration_ms"]
    assert call["attributes"]["input_tokens"] > 0


async def test_a_failed_model_call_is_an_error_span(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(raise_error(UpstreamError("model crashed", status=500)))

    stream = await client.responses.create(model=backend.model, input="Hi", stream=True)
    events = [event async for event in stream]
    assert events[-1].type == "response.failed"
    response_id = events[-1].response.id
    trace = await trace_of(http, response_id)

    check_shape(trace, response_id)
    run, call = trace["spans"]
    assert (run["status"], run["error"], run["attributes"]["status"]) == (
        "error",
        "server_error",
        "failed",
    )
    assert (call["status"], call["error"]) == ("error", "UpstreamError")


async def test_a_compaction_is_a_span_before_the_model_call(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    second = await compacted_on_create(client, backend, scripted)
    trace = await trace_of(http, second.id)

    check_shape(trace, second.id)
    assert [span["kind"] for span in trace["spans"]] == ["response", "compaction", "model_call"]
    compaction = trace["spans"][1]
    assert compaction["name"] == f"compaction {backend.model}"
    assert (
        compaction["attributes"]["input_tokens"],
        compaction["attributes"]["output_tokens"],
    ) == (
        50,
        5,
    )


async def test_a_background_response_has_its_trace_once_it_ended(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("slow ", delay(0.5), "answer")

    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    early = await not_found(http, queued.id)
    assert (await settled(client, queued.id)).status == "completed"
    trace = await trace_of(http, queued.id)

    assert early["code"] == "trace_not_ready"
    assert "stored when it ends" in early["message"]
    check_shape(trace, queued.id)
    assert [span["kind"] for span in trace["spans"]] == ["response", "model_call"]


# --- not found ---------------------------------------------------------------------------------


async def test_unknown_deleted_and_unstored_responses_have_no_trace(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("Kept.")
    scripted.add_turn("Not kept.")
    kept = await client.responses.create(model=backend.model, input="Hi")
    unstored = await client.responses.create(model=backend.model, input="Hi", store=False)
    await client.responses.delete(kept.id)

    retrieved = await http.get("/responses/resp_nope")
    for response_id in ("resp_nope", kept.id, unstored.id):
        error = await not_found(http, response_id)
        assert error["message"] == f"Response with id '{response_id}' not found."
        assert error["param"] == "response_id"
    assert (await not_found(http, "resp_nope")) == retrieved.json()["error"]


async def test_a_response_stored_without_a_trace_says_none_was_recorded(
    app: Any,
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("From before traces were kept.")
    response = await client.responses.create(model=backend.model, input="Hi")
    await app.state.runtime.database.runner.write(
        lambda conn: conn.execute(schema.responses.update().values(trace=None))
    )

    error = await not_found(http, response.id)

    assert error["code"] == "trace_not_found"
    assert error["message"].startswith(f"No trace was recorded for response '{response.id}'")


async def test_another_projects_response_has_no_trace_for_you(
    alpha: Tenant,
    beta: Tenant,
    raw: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn("Alpha's.")
    response = await alpha.client.responses.create(model=backend.model, input="Hi")

    mine = await raw.get(f"/responses/{response.id}/trace", headers=alpha.headers)
    theirs = await raw.get(f"/responses/{response.id}/trace", headers=beta.headers)

    assert mine.status_code == 200
    assert theirs.status_code == 404
    assert theirs.json()["error"]["message"] == f"Response with id '{response.id}' not found."


# --- with OpenTelemetry on ---------------------------------------------------------------------


async def test_with_traces_on_the_trace_names_its_opentelemetry_trace(
    settings: Settings, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Traced.")
    exporter = InMemorySpanExporter()
    async with running(create_app(settings, tracing=Tracing.exporting(exporter))) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as raw:
            created = await raw.post("/responses", json={"model": backend.model, "input": "Hi"})
            trace = await trace_of(raw, created.json()["id"])

    _, trace_id, _, _ = created.headers["traceresponse"].split("-")
    assert trace["trace_id"] == trace_id
    assert re.fullmatch("[0-9a-f]{32}", trace["trace_id"])
