"""WebSocket mode (``ws://HOST/v1/responses``) over a real socket, with the official ``openai``
client's ``responses.connect()`` and, for frames it would never send, the ``websockets`` client.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, get_args

import httpx2
import openai
import pytest
from openai.types.responses.responses_server_event import ResponsesServerEvent
from pydantic import BaseModel
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosedOK

from agentloom.config import ModelPriceSettings, Settings
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, delay, raise_error, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend, serve_async
from tests.e2e.support import received
from tests.plugins.server import running
from tests.server.test_errors import BODY_CASES

WAIT = 5.0  # seconds any frame or eventual condition gets before the test fails
TERMINAL = {"response.completed", "response.incomplete", "response.failed"}
# The SDK's server events by ``type``.
SERVER_EVENTS: dict[str, type[BaseModel]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls
    for cls in get_args(get_args(ResponsesServerEvent)[0])
}
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


# --- helpers -----------------------------------------------------------------------------------


def ws_url(live_url: str) -> str:
    return live_url.replace("http://", "ws://", 1) + "/responses"


@asynccontextmanager
async def socket(live_url: str) -> AsyncIterator[ClientConnection]:
    async with connect(ws_url(live_url), max_size=None, compression=None) as ws:
        yield ws


@asynccontextmanager
async def served(settings: Settings, **server: Any) -> AsyncIterator[str]:
    """The app of ``settings`` (with ``server`` settings changed) on a real socket."""
    changed = settings.model_copy(update={"server": settings.server.model_copy(update=server)})
    async with (
        running(create_app(changed)) as application,
        serve_async(application, lifespan=False) as url,
    ):
        yield url


def create(**body: Any) -> str:
    return json.dumps({"type": "response.create", **body})


def check_server_event(frame: str | bytes) -> dict[str, Any]:
    """``frame`` is one of the SDK's server events. Those without a whole ``Response`` are
    validated strictly (a ``Response`` is the HTTP tests' business)."""
    value: dict[str, Any] = json.loads(frame)
    assert value["type"] in SERVER_EVENTS, value
    if "response" not in value:
        SERVER_EVENTS[value["type"]].model_validate_json(frame)
    return value


async def recv(ws: ClientConnection) -> dict[str, Any]:
    return check_server_event(await asyncio.wait_for(ws.recv(), WAIT))


async def until_terminal(ws: ClientConnection) -> list[dict[str, Any]]:
    """Frames up to and including the next terminal event."""
    frames = [await recv(ws)]
    while frames[-1]["type"] not in TERMINAL:
        frames.append(await recv(ws))
    return frames


def the_error(frame: dict[str, Any], status: int, code: str) -> dict[str, Any]:
    """The ``error`` of an error frame in OpenAI's ``ResponseWsError`` shape."""
    assert frame["type"] == "error", frame
    assert set(frame) == {"type", "status", "error"}, frame
    assert frame["status"] == status, frame
    error: dict[str, Any] = frame["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["message"].strip()
    assert error["code"] == code, error
    return error


async def error_for(ws: ClientConnection, frame: str | bytes) -> dict[str, Any]:
    await ws.send(frame)
    return await recv(ws)


async def respond(ws: ClientConnection, **body: Any) -> dict[str, Any]:
    """The final response of a ``response.create`` that must complete."""
    await ws.send(create(**body))
    final = (await until_terminal(ws))[-1]
    assert final["type"] == "response.completed", final
    response: dict[str, Any] = final["response"]
    return response


def user(content: str) -> dict[str, str]:
    return {"role": "user", "content": content}


async def eventually_cancelled(client: openai.AsyncOpenAI, response_id: str) -> None:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            if (await client.responses.retrieve(response_id)).status == "cancelled":
                return
        except openai.NotFoundError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{response_id} was not stored as cancelled within {WAIT}s")
        await asyncio.sleep(0.02)


# --- responses ---------------------------------------------------------------------------------


async def test_a_response_through_the_sdk_connection(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns([text("one two three", chunk_size=4)], [text("one two three", chunk_size=4)])
    sse: list[tuple[str, int]] = []
    stream = await live_client.responses.create(model=backend.model, input="Count", stream=True)
    async for sse_event in stream:
        sse.append((sse_event.type, sse_event.sequence_number))

    over_ws: list[tuple[str, int]] = []
    async with live_client.responses.connect() as connection:
        await connection.send({"type": "response.create", "model": backend.model, "input": "Count"})
        while True:
            raw = await asyncio.wait_for(connection.recv_bytes(), WAIT)
            check_server_event(raw)
            event = connection.parse_event(raw)
            assert type(event) is SERVER_EVENTS[event.type]
            assert event.type != "error", event
            over_ws.append((event.type, event.sequence_number or 0))
            if event.type == "response.completed":
                final = event.response
                break

    assert over_ws == sse
    assert [seq for _, seq in over_ws] == list(range(len(over_ws)))
    assert final.output_text == "one two three"
    stored = await live_client.responses.retrieve(final.id)
    assert stored.status == "completed"
    assert stored.output_text == "one two three"


async def test_several_responses_on_one_connection(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns("first", "second", "third")
    ids = []
    async with live_client.responses.connect() as connection:
        for n in range(3):
            await connection.send({"type": "response.create", "model": backend.model, "input": "x"})
            sequence = []
            async for event in connection:
                sequence.append(event.sequence_number)
                if event.type == "response.completed":
                    ids.append(event.response.id)
                    assert event.response.output_text == ["first", "second", "third"][n]
                    break
            assert sequence == list(range(len(sequence)))

    assert len(set(ids)) == 3
    for response_id in ids:
        assert (await live_client.responses.retrieve(response_id)).status == "completed"


async def test_a_function_tool_round_trip_on_one_connection(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns([tool_call("get_weather", {"city": "Paris"})], "Sunny in Paris.")

    async with live_client.responses.connect() as connection:
        await connection.send(
            {
                "type": "response.create",
                "model": backend.model,
                "input": "Weather in Paris?",
                "tools": [WEATHER],
            }
        )
        async for event in connection:
            if event.type == "response.completed":
                first = event.response
                break
        call = first.output[-1]
        assert call.type == "function_call"
        assert json.loads(call.arguments) == {"city": "Paris"}
        await connection.send(
            {
                "type": "response.create",
                "model": backend.model,
                "previous_response_id": first.id,
                "input": [
                    {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
                ],
                "tools": [WEATHER],
            }
        )
        async for event in connection:
            if event.type == "response.completed":
                second = event.response
                break

    assert second.output_text == "Sunny in Paris."
    messages = received(backend)[-1]["messages"]
    assert messages[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": "sunny"}


async def test_a_conversation_over_websocket(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns("Hello.", "Hello again.")
    conversation = await live_client.conversations.create()

    async with socket(live_url) as ws:
        await respond(ws, model=backend.model, input="Hi", conversation=conversation.id)
        await respond(ws, model=backend.model, input="Again", conversation=conversation.id)

    assert received(backend)[-1]["messages"] == [
        user("Hi"),
        {"role": "assistant", "content": "Hello."},
        user("Again"),
    ]
    items = live_client.conversations.items.list(conversation.id, order="asc")
    assert [item.type async for item in items] == ["message"] * 4


# --- continuation on the connection ------------------------------------------------------------


async def test_store_false_continues_the_latest_response_of_the_connection(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns("Hello.", "Hello again.", "And again.")

    async with socket(live_url) as ws:
        first = await respond(ws, model=backend.model, input="Hi", store=False)
        second = await respond(
            ws, model=backend.model, input="Again", store=False, previous_response_id=first["id"]
        )
        await respond(
            ws,
            model=backend.model,
            input="Once more",
            store=False,
            previous_response_id=second["id"],
        )

    assert received(backend)[-1]["messages"] == [
        user("Hi"),
        {"role": "assistant", "content": "Hello."},
        user("Again"),
        {"role": "assistant", "content": "Hello again."},
        user("Once more"),
    ]
    # Connection-local: nothing was stored, and another connection cannot continue it.
    with pytest.raises(openai.NotFoundError):
        await live_client.responses.retrieve(second["id"])
    async with socket(live_url) as other:
        await other.send(create(model=backend.model, input="x", previous_response_id=second["id"]))
        error = the_error(await recv(other), 404, "previous_response_not_found")
    assert error["param"] == "previous_response_id"


async def test_only_the_latest_response_is_kept(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turns("one", "two", "three")

    async with socket(live_url) as ws:
        first = await respond(ws, model=backend.model, input="a", store=False)
        second = await respond(ws, model=backend.model, input="b", store=False)
        body = create(model=backend.model, input="c", store=False, previous_response_id=first["id"])
        error = the_error(await error_for(ws, body), 404, "previous_response_not_found")
        assert error["param"] == "previous_response_id"
        assert first["id"] in error["message"]
        # The refusal named an evicted response: the latest one is still there.
        await respond(ws, model=backend.model, input="d", previous_response_id=second["id"])

    assert received(backend)[-1]["messages"] == [
        user("b"),
        {"role": "assistant", "content": "two"},
        user("d"),
    ]


async def test_stored_responses_are_continued_from_the_database(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns("stored", "over ws")
    stored = await live_client.responses.create(model=backend.model, input="over http")

    async with socket(live_url) as ws:
        await respond(ws, model=backend.model, input="now", previous_response_id=stored.id)

    assert received(backend)[-1]["messages"] == [
        user("over http"),
        {"role": "assistant", "content": "stored"},
        user("now"),
    ]


async def test_a_failed_continuation_evicts_the_chain(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turns("Hello.", [raise_error(UpstreamError("model crashed", status=500))])

    async with socket(live_url) as ws:
        first = await respond(ws, model=backend.model, input="Hi", store=False)
        await ws.send(
            create(model=backend.model, input="x", store=False, previous_response_id=first["id"])
        )
        frames = await until_terminal(ws)
        assert frames[-1]["type"] == "response.failed"
        again = create(
            model=backend.model, input="y", store=False, previous_response_id=first["id"]
        )
        the_error(await error_for(ws, again), 404, "previous_response_not_found")


async def test_a_refused_continuation_evicts_the_chain(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turns("Hello.")

    async with socket(live_url) as ws:
        first = await respond(ws, model=backend.model, input="Hi", store=False)
        refused = create(
            model=backend.model,
            input="x",
            store=False,
            previous_response_id=first["id"],
            tool_choice={"type": "function", "name": "ghost"},
        )
        error = the_error(await error_for(ws, refused), 400, "invalid_request_error")
        assert error["param"] == "tool_choice"
        again = create(
            model=backend.model, input="y", store=False, previous_response_id=first["id"]
        )
        the_error(await error_for(ws, again), 404, "previous_response_not_found")


# --- one response at a time --------------------------------------------------------------------


async def test_a_second_create_while_one_runs_is_refused(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turns(["first ", delay(0.5), "second"], "next")

    async with socket(live_url) as ws:
        await ws.send(create(model=backend.model, input="slow"))
        assert (await recv(ws))["type"] == "response.created"
        await ws.send(create(model=backend.model, input="too early"))
        frames = await until_terminal(ws)
        errors = [f for f in frames if f["type"] == "error"]
        assert len(errors) == 1
        the_error(errors[0], 409, "response_already_in_flight")
        events = [f for f in frames if f["type"] != "error"]
        assert [f["sequence_number"] for f in events] == list(range(1, len(events) + 1))
        assert events[-1]["type"] == "response.completed"
        assert events[-1]["response"]["output"][0]["content"][0]["text"] == "first second"
        # Once it ended, the connection takes the next one.
        after = await respond(ws, model=backend.model, input="now")
        assert after["output"][0]["content"][0]["text"] == "next"

    assert len(backend.requests) == 2


async def test_a_client_that_leaves_mid_response_cancels_it(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turn("first", delay(2), "second")

    async with live_client.responses.connect() as connection:
        await connection.send({"type": "response.create", "model": backend.model, "input": "Go"})
        async for event in connection:
            if event.type == "response.created":
                response_id = event.response.id
            if event.type == "response.output_text.delta":
                break  # leaving the block closes the connection

    await eventually_cancelled(live_client, response_id)
    stored = await live_client.responses.retrieve(response_id)
    assert stored.output_text == "first"
    assert backend.disconnects == 1


async def test_a_client_that_leaves_releases_its_conversation(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turns(["first", delay(2), "second"], "after")
    conversation = await live_client.conversations.create()

    async with socket(live_url) as ws:
        await ws.send(create(model=backend.model, input="Go", conversation=conversation.id))
        response_id = (await recv(ws))["response"]["id"]
        while (await recv(ws))["type"] != "response.output_text.delta":
            pass

    await eventually_cancelled(live_client, response_id)
    after = await live_client.responses.create(
        model=backend.model, input="Again", conversation=conversation.id
    )
    assert after.output_text == "after"
    assert received(backend)[-1]["messages"] == [user("Again")]  # the cancelled turn added nothing


# --- error frames ------------------------------------------------------------------------------


# (id, frame, status, param, code)
ERROR_CASES: list[tuple[str, str | bytes, int, str | None, str]] = [
    ("bad JSON", '{"type": "response.create",', 400, None, "invalid_json"),
    ("binary, not UTF-8", b"\xff\xfe", 400, None, "invalid_json"),
    ("empty frame", "", 400, None, "invalid_json"),
    ("JSON array", "[1, 2]", 400, None, "invalid_value"),
    ("JSON string", '"response.create"', 400, None, "invalid_value"),
    ("no type", '{"model": "m"}', 400, "type", "missing_required_parameter"),
    ("unknown type", '{"type": "response.cancel"}', 400, "type", "invalid_value"),
    ("response.steer", '{"type": "response.steer"}', 400, "type", "unsupported_event_type"),
    ("stream", create(stream=True), 400, "stream", "unsupported_parameter"),
    ("stream false", create(stream=False), 400, "stream", "unsupported_parameter"),
    ("stream_options", create(stream_options={}), 400, "stream_options", "unsupported_parameter"),
    ("background", create(background=True), 400, "background", "unsupported_parameter"),
    ("stream_id", create(stream_id="lane"), 400, "stream_id", "unsupported_parameter"),
    ("generate false", create(generate=False), 400, "generate", "unsupported_parameter"),
    ("unknown model", create(model="no-such-model", input="x"), 404, "model", "model_not_found"),
    ("too large", create(input="x" * 1_100_000), 413, None, "request_too_large"),
]


async def test_error_frames(scripted: ScriptedModel, backend: FakeBackend, live_url: str) -> None:
    scripted.add_turn("still here")
    wrong = []

    async with socket(live_url) as ws:
        for name, frame, status, param, code in ERROR_CASES:
            answer = await error_for(ws, frame)
            error = answer.get("error") or {}
            if (answer.get("status"), error.get("param"), error.get("code")) != (
                status,
                param,
                code,
            ):
                wrong.append((name, answer))
            else:
                the_error(answer, status, code)
        # No error closes the connection.
        response = await respond(ws, model=backend.model, input="ok?")
        assert response["output"][0]["content"][0]["text"] == "still here"

    assert wrong == []
    assert len(backend.requests) == 1


async def test_validation_errors_are_the_ones_http_gives(
    backend: FakeBackend, live_url: str
) -> None:
    # Every body the HTTP error table sends, but those with a field WebSocket mode refuses.
    websocket_only = {"stream", "stream_options", "background"}
    cases = [
        (name, body)
        for name, body, *_ in BODY_CASES
        if isinstance(body, dict) and not websocket_only & body.keys()
    ]
    assert len(cases) > 20
    mismatches = []
    async with httpx2.AsyncClient(base_url=live_url, timeout=WAIT) as http, socket(live_url) as ws:
        for name, body in cases:
            over_http = (await http.post("/responses", json=body)).json()["error"]
            # a frame always has a code (the specification's): where HTTP's is null, the type
            over_http["code"] = over_http["code"] or over_http["type"]
            frame = await error_for(ws, create(**body))
            assert frame["type"] == "error", (name, frame)
            if frame["error"] != over_http:
                mismatches.append((name, over_http, frame["error"]))

    assert mismatches == []
    assert backend.requests == []


# --- the age limit -----------------------------------------------------------------------------


async def closed_for_age(ws: ClientConnection) -> None:
    the_error(await recv(ws), 400, "websocket_connection_limit_reached")
    with pytest.raises(ConnectionClosedOK) as closed:
        await asyncio.wait_for(ws.recv(), WAIT)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1000
    assert closed.value.rcvd.reason


async def test_an_idle_connection_is_closed_at_its_age_limit(settings: Settings) -> None:
    async with served(settings, websocket_max_age=0.2) as url, socket(url) as ws:
        started = time.monotonic()
        await closed_for_age(ws)
        assert 0.15 < time.monotonic() - started < WAIT


async def test_a_running_response_finishes_before_the_age_limit_closes(
    scripted: ScriptedModel, backend: FakeBackend, settings: Settings
) -> None:
    scripted.add_turn("first ", delay(1.2), "second")

    async with served(settings, websocket_max_age=0.4) as url, socket(url) as ws:
        await ws.send(create(model=backend.model, input="slow"))
        while (await recv(ws))["type"] != "response.output_text.delta":
            pass
        await asyncio.sleep(0.6)  # past the age limit, while the response still runs
        await ws.send(create(model=backend.model, input="too late"))
        answer = await recv(ws)
        the_error(answer, 400, "websocket_connection_limit_reached")
        frames = await until_terminal(ws)
        assert frames[-1]["type"] == "response.completed"
        assert frames[-1]["response"]["output"][0]["content"][0]["text"] == "first second"
        await closed_for_age(ws)

    assert len(backend.requests) == 1


async def test_each_frame_is_a_logged_request_held_to_the_spend_limit(
    settings: Settings, scripted: ScriptedModel, backend: FakeBackend
) -> None:
    """A ``response.create`` frame is a request of the traffic as an HTTP one is: its row in
    the request log (a refused frame's too), and refused with ``insufficient_quota`` once the
    organization is over its spend limit."""
    scripted.add_turns("Priced.")
    dear = {backend.model: ModelPriceSettings(input=1e6, cached_input=1e6, output=1e6)}
    server = settings.server.model_copy(update={"usage_flush_interval": 0.05})
    priced = settings.model_copy(update={"prices": dear, "server": server})  # $1 a token
    async with served(priced) as url, httpx2.AsyncClient(base_url=url, timeout=WAIT) as http:
        async with socket(url) as ws:
            response = await respond(ws, model=backend.model, input="Hi")
            the_error(await error_for(ws, "not json"), 400, "invalid_json")
        limit = {"currency": "USD", "interval": "month", "threshold_amount": 1}
        assert (await http.post("/organization/spend_limit", json=limit)).status_code == 200
        deadline = time.monotonic() + WAIT
        async with socket(url) as ws:
            while True:  # the spend check learns the spend within a flush or two
                frame = await error_for(ws, create(model=backend.model, input="Again"))
                if frame["type"] == "error" or time.monotonic() > deadline:
                    break
                await until_terminal(ws)
        the_error(frame, 429, "insufficient_quota")

        async def logged() -> list[dict[str, Any]]:  # written with the ledger's next flush
            found: list[dict[str, Any]] = (await http.get("/organization/requests")).json()["data"]
            return found

        rows = await logged()
        while not any(r["status"] == 429 for r in rows) and time.monotonic() < deadline + WAIT:
            await asyncio.sleep(0.05)
            rows = await logged()

    kept = [(r["endpoint"], r["status"], r["error_code"]) for r in reversed(rows)]
    assert kept[:2] == [("responses", 200, None), ("responses", 400, "invalid_json")]
    assert kept[-1] == ("responses", 429, "insufficient_quota")
    first = rows[-1]
    assert (first["model"], first["response_id"]) == (backend.model, response["id"])
    assert first["cost"] > 1
    assert first["input_tokens"] > 0
    assert first["latency_ms"] > 0
