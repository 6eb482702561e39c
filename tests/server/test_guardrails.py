"""Guardrails on ``POST /v1/responses`` through the official ``openai`` client: the input checked
before the model is called, the streamed output released only once checked (violations split
across chunks and batches included), server tools' arguments and outputs, fail closed / open,
unknown shields, server defaults, and WebSocket mode.

Shields: ``pii`` (rules: emails, cards, private keys), ``guard`` (a Llama Guard served by the
fake backend, answered by :func:`tests.safety.guard_fake.guard`) and ``guard_open`` (the same,
``on_error = "allow"``)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from mcp.server.mcpserver import MCPServer
from openai.types.responses import Response, ResponseStreamEvent
from starlette.applications import Starlette
from websockets.asyncio.client import connect

from agentloom.config import McpSettings, Settings
from agentloom.engine.guardrails import BLOCKED_CALL, BLOCKED_OUTPUT
from agentloom.errors import UpstreamError
from agentloom.inference.base import ChatRequest, TextPart
from agentloom.inference.scripted import (
    ScriptedModel,
    TurnPart,
    raise_error,
    reasoning,
    text,
    tool_call,
)
from agentloom.safety.service import CHECK_FAILED, REFUSAL
from agentloom.safety.settings import LlamaGuardShieldSettings, RulesShieldSettings, SafetySettings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve_async
from agentloom.testing.serving import serve
from tests.plugins.server import BASE_URL, make_settings, running
from tests.safety.guard_fake import MARKER as HARM
from tests.safety.guard_fake import guard
from tests.server.test_background import settled

CARD = "4111 1111 1111 1111"  # Luhn-valid
EMAIL = "alice.smith@example.com"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----"
FILLER = "The quick brown fox jumps over the lazy dog. "  # 45 characters, harmless
WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def safety_settings(backend: FakeBackend, **options: Any) -> SafetySettings:
    return SafetySettings(
        shields=[
            RulesShieldSettings(id="pii", detectors=["email", "credit_card", "private_key"]),
            LlamaGuardShieldSettings(id="guard", model=f"fake/{backend.model}", timeout=2.0),
            LlamaGuardShieldSettings(
                id="guard_open", model=f"fake/{backend.model}", timeout=2.0, on_error="allow"
            ),
        ],
        **options,
    )


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    mcp = McpSettings(allow_loopback=True, connect_timeout=3.0, call_timeout=3.0)
    return base.model_copy(update={"safety": safety_settings(backend), "mcp": mcp})


# --- helpers ---------------------------------------------------------------------------------


def is_guard_prompt(request: ChatRequest) -> bool:
    content = request.messages[-1].content
    parts = (
        [content]
        if isinstance(content, str)
        else [p.text for p in content or () if isinstance(p, TextPart)]
    )
    return any("<BEGIN CONVERSATION>" in part for part in parts)


class Router:
    """Answers Llama Guard prompts with :func:`guard` (or fails them), the rest with turns."""

    def __init__(self, *turns: Sequence[TurnPart] | str, guard_fails: bool = False) -> None:
        self.turns: deque[Sequence[TurnPart] | str] = deque(turns)
        self.guard_fails = guard_fails

    def __call__(self, request: ChatRequest) -> str | Sequence[TurnPart]:
        if is_guard_prompt(request):
            if self.guard_fails:
                return [raise_error(UpstreamError("the guard is down", status=503))]
            return guard(request)
        return self.turns.popleft()


def model_requests(backend: FakeBackend) -> list[dict[str, Any]]:
    """What the answering model received (not the Llama Guard prompts)."""
    return [r for r in backend.requests if "<BEGIN CONVERSATION>" not in json.dumps(r)]


async def stream(
    client: openai.AsyncOpenAI, model: str, **params: Any
) -> list[ResponseStreamEvent]:
    events = await client.responses.create(model=model, stream=True, **params)
    return [event async for event in events]


def deltas(events: Sequence[ResponseStreamEvent]) -> str:
    return "".join(e.delta for e in events if e.type == "response.output_text.delta")


def final(events: Sequence[ResponseStreamEvent]) -> Response:
    last = events[-1]
    assert last.type == "response.completed"
    return last.response


def assert_refused(response: Response, message: str = REFUSAL) -> None:
    """The response ends completed with one assistant message holding only a refusal."""
    assert response.status == "completed"
    (item,) = [i for i in response.output if i.type == "message"]
    assert [(p.type, getattr(p, "refusal", None)) for p in item.content] == [("refusal", message)]
    assert response.output_text == ""


def guarded(**extra: Any) -> dict[str, Any]:
    return {"extra_body": {"guardrails": ["pii"], **extra}}


# --- input -----------------------------------------------------------------------------------


async def test_a_blocked_input_is_refused_without_calling_the_model(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    events = await stream(client, backend.model, input=f"Charge my card {CARD}", **guarded())

    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.refusal.delta",
        "response.refusal.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    response = final(events)
    assert_refused(response)
    assert scripted.requests == []
    stored = await client.responses.retrieve(response.id)
    assert_refused(stored)
    assert stored.usage is not None
    assert stored.usage.total_tokens == 0


async def test_function_call_outputs_in_the_input_are_checked(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}))
    first = await client.responses.create(model=backend.model, input="Weather?", tools=[WEATHER])
    call = first.output[-1]
    assert call.type == "function_call"
    answer = {"type": "function_call_output", "call_id": call.call_id, "output": f"Ask {EMAIL}"}

    response = await client.responses.create(
        model=backend.model, input=[answer], previous_response_id=first.id, **guarded()
    )

    assert_refused(response)
    assert len(scripted.requests) == 1  # only the first response called the model


async def test_a_clean_input_runs_and_history_is_not_rechecked(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns(f"Noted: {EMAIL}", "Hello again")
    first = await client.responses.create(model=backend.model, input="Remember my mail")

    second = await client.responses.create(
        model=backend.model, input="Hi", previous_response_id=first.id, **guarded()
    )

    assert second.output_text == "Hello again"  # the earlier email is history, not new input


async def test_unknown_shields_are_a_400_before_anything_runs(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="Hi", extra_body={"guardrails": ["pii", "nope"]}
        )

    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["param"], error["code"]) == ("guardrails[1]", "invalid_shield")
    assert scripted.requests == []
    assert (await http.get("/responses")).json()["data"] == []


# Llama Stack's ``ResponseGuardrailSpec``: ``{"type": shield_id}``, beside plain ids.


async def test_spec_objects_name_shields_as_ids_do(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(Router(f"Write to {EMAIL}"))
    body = {"guardrails": [{"type": "guard"}, "pii"]}

    events = await stream(client, backend.model, input="Who do I ask?", extra_body=body)

    assert_refused(final(events))  # pii, named by id, blocked the output
    refused = await stream(client, backend.model, input=f"How do I {HARM}?", extra_body=body)
    assert_refused(final(refused))  # guard, named by a spec, blocked the input
    assert len(model_requests(backend)) == 1  # only the first response reached the model


@pytest.mark.both_databases
async def test_spec_objects_guard_a_background_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    queued = await client.responses.create(
        model=backend.model,
        input=f"Charge my card {CARD}",
        background=True,
        extra_body={"guardrails": [{"type": "pii"}]},
    )

    final_state = await settled(client, queued.id)

    assert_refused(final_state)
    assert scripted.requests == []


@pytest.mark.parametrize(
    ("guardrails", "param", "code"),
    [
        ([{"type": "nope"}], "guardrails[0].type", "invalid_shield"),
        (["pii", {"type": "pii", "severity": "high"}], "guardrails[1].severity", "invalid_value"),
        ([{"id": "pii"}], "guardrails[0].type", "missing_required_parameter"),
        ([{"type": ""}], "guardrails[0].type", "invalid_value"),
        ([7], "guardrails[0]", "invalid_value"),
    ],
)
async def test_a_spec_with_an_unknown_shield_or_field_is_a_400_naming_it(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    guardrails: list[object],
    param: str,
    code: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=backend.model, input="Hi", extra_body={"guardrails": guardrails}
        )

    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", param, code)
    assert param.rsplit(".", 1)[-1] in error["message"]
    assert scripted.requests == []


async def test_default_guardrails_apply_to_every_response(
    backend: FakeBackend, database_url: str, tmp_path: Path, scripted: ScriptedModel
) -> None:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    configured = base.model_copy(
        update={"safety": safety_settings(backend, default_guardrails=["pii"])}
    )
    async with (
        running(create_app(configured)) as app,
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE_URL) as http,
        openai.AsyncOpenAI(base_url=BASE_URL, api_key="x", http_client=http) as client,
    ):
        response = await client.responses.create(model=backend.model, input=f"Mail {EMAIL}")

    assert_refused(response)
    assert scripted.requests == []


# --- streamed output ---------------------------------------------------------------------------


@pytest.mark.parametrize("violation", [CARD, EMAIL])
@pytest.mark.parametrize("offset", [0, 60, 88, 97, 100, 130])
async def test_a_violation_split_across_chunks_never_reaches_the_client(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    violation: str,
    offset: int,
) -> None:
    answer = (FILLER * 4)[:offset] + violation + " " + FILLER * 3
    scripted.add_turn(text(answer, chunk_size=3))

    events = await stream(client, backend.model, input="Hi", **guarded())

    shown = deltas(events)
    assert answer.startswith(shown)
    assert len(shown) <= offset  # nothing from the violation on
    for part in (violation[:6], violation[-6:]):
        assert part not in "".join(json.dumps(e.model_dump()) for e in events)
    response = final(events)
    assert_refused(response)
    kinds = [e.type for e in events]
    assert kinds.index("response.refusal.delta") < kinds.index("response.output_item.done")
    stored = await client.responses.retrieve(response.id)
    assert_refused(stored)
    assert violation not in stored.model_dump_json()


async def test_a_clean_answer_streams_the_same_chunks_with_or_without_guardrails(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    answer = FILLER * 7
    scripted.add_turns([reasoning("Let me think " * 12, chunk_size=5), text(answer, chunk_size=7)])
    scripted.add_turns([reasoning("Let me think " * 12, chunk_size=5), text(answer, chunk_size=7)])

    plain = await stream(client, backend.model, input="Hi")
    checked = await stream(client, backend.model, input="Hi", **guarded())

    def shape(events: Sequence[ResponseStreamEvent]) -> list[tuple[str, str]]:
        return [(e.type, getattr(e, "delta", "")) for e in events if "delta" in e.type]

    assert shape(checked) == shape(plain)
    assert deltas(checked) == answer
    assert final(checked).output_text == final(plain).output_text == answer


async def test_a_non_streamed_answer_is_replaced_by_a_refusal(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text(FILLER * 3 + f"Write to {EMAIL}. " + FILLER, chunk_size=4))

    response = await client.responses.create(model=backend.model, input="Hi", **guarded())

    assert_refused(response)
    assert EMAIL not in response.model_dump_json()


async def test_function_call_arguments_are_checked_before_they_are_handed_over(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": f"Paris {CARD}"}, chunk_size=4))

    events = await stream(client, backend.model, input="Hi", tools=[WEATHER], **guarded())

    assert not [e for e in events if "function_call" in e.type]
    assert_refused(final(events))


async def test_a_model_backed_shield_blocks_the_streamed_output(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(Router([text(FILLER * 3 + HARM + FILLER, chunk_size=5)]))

    events = await stream(client, backend.model, input="Hi", extra_body={"guardrails": ["guard"]})

    assert HARM not in deltas(events)
    assert_refused(final(events))


# --- fail closed / open ----------------------------------------------------------------------


async def test_a_failing_shield_blocks_with_the_check_failed_message(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(Router("never said", guard_fails=True))

    response = await client.responses.create(
        model=backend.model, input="Hi", extra_body={"guardrails": ["guard"]}
    )

    assert_refused(response, CHECK_FAILED)
    assert model_requests(backend) == []


async def test_a_failing_shield_that_allows_on_error_lets_the_answer_through(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.respond_with(Router("All good.", guard_fails=True))

    response = await client.responses.create(
        model=backend.model, input="Hi", extra_body={"guardrails": ["guard_open"]}
    )

    assert response.output_text == "All good."
    assert len(model_requests(backend)) == 1


# --- server tools (MCP) ----------------------------------------------------------------------


def directory_server(calls: list[str]) -> MCPServer:
    server = MCPServer("directory")

    @server.tool()
    def lookup(name: str) -> str:
        """Look a person up."""
        calls.append(name)
        return {"alice": f"Contact: {EMAIL}", "key": f"Their key:\n{PRIVATE_KEY}"}.get(
            name, "nobody"
        )

    return server


@pytest.fixture(scope="module")
def directory() -> Iterator[tuple[str, list[str]]]:
    calls: list[str] = []
    with serve(directory_server(calls).streamable_http_app()) as base:
        yield base.removesuffix("/v1") + "/mcp", calls


def mcp_tool(url: str) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "dir", "server_url": url, "require_approval": "never"}


@pytest.mark.parametrize(("name", "secret"), [("alice", EMAIL), ("key", "PRIVATE KEY")])
async def test_pii_in_a_tool_output_reaches_neither_the_model_nor_the_client(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    directory: tuple[str, list[str]],
    name: str,
    secret: str,
) -> None:
    url, calls = directory
    scripted.add_turn(tool_call("lookup", {"name": name}))
    scripted.add_turn("I could not read that.")

    response = await client.responses.create(
        model=backend.model, input="Who?", tools=[mcp_tool(url)], **guarded()
    )

    assert calls[-1] == name  # the tool ran
    call = next(item for item in response.output if item.type == "mcp_call")
    assert call.output == BLOCKED_OUTPUT
    told = scripted.requests[1].messages[-1]
    assert (told.role, told.content) == ("tool", BLOCKED_OUTPUT)
    assert secret not in json.dumps(backend.requests)
    assert secret not in response.model_dump_json()
    stored = await client.responses.retrieve(response.id)
    assert secret not in stored.model_dump_json()
    assert response.output_text == "I could not read that."


async def test_a_tool_call_with_blocked_arguments_does_not_run(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    directory: tuple[str, list[str]],
) -> None:
    url, calls = directory
    before = len(calls)
    scripted.add_turn(tool_call("lookup", {"name": EMAIL}))
    scripted.add_turn("The lookup was blocked.")

    events = await stream(client, backend.model, input="Who?", tools=[mcp_tool(url)], **guarded())

    assert len(calls) == before
    response = final(events)
    call = next(item for item in response.output if item.type == "mcp_call")
    assert call.status == "failed"
    told = scripted.requests[1].messages[-1]
    assert (told.role, told.content) == ("tool", BLOCKED_CALL)
    added = [
        e for e in events if e.type == "response.output_item.added" and e.item.type == "mcp_call"
    ]
    assert len(added) == 1
    assert response.output_text == "The lookup was blocked."


# --- WebSocket mode ----------------------------------------------------------------------------


async def test_guardrails_apply_in_websocket_mode(
    app: Starlette, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text(FILLER * 3 + f"Mail {EMAIL}", chunk_size=3))
    body = {"type": "response.create", "model": backend.model, "input": "Hi", "guardrails": ["pii"]}

    async with (
        serve_async(app, lifespan=False) as url,
        connect(url.replace("http://", "ws://") + "/responses") as ws,
    ):
        await ws.send(json.dumps(body))
        frames = []
        while not frames or frames[-1]["type"] not in ("response.completed", "error"):
            frames.append(json.loads(await ws.recv()))

    shown = "".join(f["delta"] for f in frames if f["type"] == "response.output_text.delta")
    assert EMAIL[:6] not in shown
    assert_refused(Response.model_validate(frames[-1]["response"]))
