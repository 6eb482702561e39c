"""Streamed responses: event order and numbering, the SSE framing, and the final response."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
from openai.types.responses import (
    FunctionToolParam,
    Response,
    ResponseCompletedEvent,
    ResponseFailedEvent,
    ResponseIncompleteEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseStreamEvent,
)

from agentloom.inference.scripted import (
    ScriptedModel,
    TurnPart,
    break_stream,
    finish,
    reasoning,
    refusal,
    text,
    tool_call,
)
from agentloom.testing.backend import FakeBackend

WEATHER: FunctionToolParam = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": False,
}
TERMINAL = ("response.completed", "response.incomplete", "response.failed")


async def collect(
    client: openai.AsyncOpenAI, backend: FakeBackend, **params: Any
) -> list[ResponseStreamEvent]:
    """Every event of one streamed create, after checking their numbering: 0, 1, 2 ..."""
    params.setdefault("input", "Hi")
    stream = await client.responses.create(model=backend.model, stream=True, **params)
    events = [event async for event in stream]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    return events


def types(events: list[ResponseStreamEvent]) -> list[str]:
    return [event.type for event in events]


def final_of(events: list[ResponseStreamEvent]) -> Response:
    """The response of the terminal event, which must be the last event and the only one."""
    last = events[-1]
    assert isinstance(last, ResponseCompletedEvent | ResponseIncompleteEvent | ResponseFailedEvent)
    assert all(event.type not in TERMINAL for event in events[:-1])
    return last.response


def added_items(events: list[ResponseStreamEvent]) -> list[tuple[int, str]]:
    """``(output_index, item type)`` of every ``response.output_item.added`` event."""
    return [
        (e.output_index, e.item.type) for e in events if isinstance(e, ResponseOutputItemAddedEvent)
    ]


def done_items(events: list[ResponseStreamEvent]) -> list[tuple[int, str]]:
    """``(output_index, item type)`` of every ``response.output_item.done`` event."""
    return [
        (e.output_index, e.item.type) for e in events if isinstance(e, ResponseOutputItemDoneEvent)
    ]


def without_ids(response: Response) -> list[dict[str, Any]]:
    """The output items of ``response`` with their generated ids left out."""
    return [item.model_dump(exclude={"id"}) for item in response.output]


# --- event order and numbering -------------------------------------------------------------


async def test_text_events_in_order(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Hello world", chunk_size=4))

    events = await collect(client, backend)

    assert types(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    created, in_progress = events[0], events[1]
    assert created.type == "response.created"
    assert in_progress.type == "response.in_progress"
    assert created.response.status == in_progress.response.status == "in_progress"
    assert created.response.output == []
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert deltas == ["Hell", "o wo", "rld"]
    (done,) = [e for e in events if e.type == "response.output_text.done"]
    assert done.text == "Hello world"
    added = events[2]
    assert added.type == "response.output_item.added"
    assert added.item.type == "message"
    assert added.item.status == "in_progress"
    item_events = [e for e in events[3:-2] if hasattr(e, "item_id")]
    assert {e.item_id for e in item_events} == {added.item.id}
    assert {getattr(e, "output_index", None) for e in events[2:-1]} == {0}
    final = final_of(events)
    assert final.id == created.response.id
    assert final.status == "completed"
    assert final.output_text == "Hello world"


async def test_reasoning_then_text_events(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("Think hard.", chunk_size=6), text("Answer."))

    events = await collect(client, backend)

    assert types(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.reasoning_text.delta",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    items = [e for e in events if e.type == "response.output_item.done"]
    assert [(e.output_index, e.item.type) for e in items] == [(0, "reasoning"), (1, "message")]
    (reasoning_done,) = [e for e in events if e.type == "response.reasoning_text.done"]
    assert reasoning_done.text == "Think hard."
    assert reasoning_done.item_id == items[0].item.id
    assert [item.type for item in final_of(events).output] == ["reasoning", "message"]


async def test_function_call_events(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_1", chunk_size=6))

    events = await collect(client, backend, tools=[WEATHER])

    assert types(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    added = events[2]
    assert added.type == "response.output_item.added"
    assert added.item.type == "function_call"
    assert added.item.arguments == ""
    assert added.item.call_id == "call_1"
    assert added.item.name == "get_weather"
    assert added.item.status == "in_progress"
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert "".join(deltas) == '{"city": "Paris"}'
    (done,) = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert done.arguments == '{"city": "Paris"}'
    assert done.item_id == added.item.id
    item_done = events[-2]
    assert item_done.type == "response.output_item.done"
    assert item_done.item.type == "function_call"
    assert item_done.item.status == "completed"
    assert item_done.item.arguments == '{"city": "Paris"}'
    assert final_of(events).output == [item_done.item]


async def test_text_then_parallel_calls_get_their_own_output_indexes(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        text("Checking."),
        tool_call("get_weather", {"city": "A"}),
        tool_call("get_weather", {"city": "B"}),
    )

    events = await collect(client, backend, tools=[WEATHER])

    expected = [(0, "message"), (1, "function_call"), (2, "function_call")]
    assert added_items(events) == expected
    assert done_items(events) == expected
    arguments = [e.arguments for e in events if e.type == "response.function_call_arguments.done"]
    assert arguments == ['{"city": "A"}', '{"city": "B"}']


async def test_dropped_call_sends_no_events(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "A"}), tool_call("get_weather", {"c": 1}))

    events = await collect(client, backend, tools=[WEATHER], parallel_tool_calls=False)

    assert types(events).count("response.output_item.added") == 1
    assert types(events).count("response.function_call_arguments.done") == 1
    assert len(final_of(events).output) == 1


async def test_second_model_call_continues_the_numbering(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    # The model calls a tool it was not offered: the call is dropped and the model asked again.
    scripted.add_turn(reasoning("Use a tool."), tool_call("get_weather", {"city": "A"}))
    scripted.add_turn(text("I cannot check.", chunk_size=5))

    events = await collect(client, backend, tools=[WEATHER], tool_choice="none")

    assert len(backend.requests) == 2
    assert "response.function_call_arguments.delta" not in types(events)
    assert added_items(events) == [(0, "reasoning"), (1, "message")]
    assert done_items(events) == [(0, "reasoning"), (1, "message")]
    assert types(events).count("response.created") == 1
    assert [item.type for item in final_of(events).output] == ["reasoning", "message"]
    assert final_of(events).output_text == "I cannot check."


async def test_refusal_events(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(refusal("I can't help with that.", chunk_size=10))

    events = await collect(client, backend)

    assert types(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.refusal.delta",
        "response.refusal.delta",
        "response.refusal.delta",
        "response.refusal.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    part_added = events[3]
    assert part_added.type == "response.content_part.added"
    assert part_added.part.type == "refusal"
    (done,) = [e for e in events if e.type == "response.refusal.done"]
    assert done.refusal == "I can't help with that."
    message = final_of(events).output[0]
    assert message.type == "message"
    assert [part.type for part in message.content] == ["refusal"]


async def test_incomplete_stream_ends_with_response_incomplete(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("Once upon a"), finish("length"))

    events = await collect(client, backend)

    assert events[-1].type == "response.incomplete"
    final = final_of(events)
    assert final.status == "incomplete"
    assert final.incomplete_details is not None
    assert final.incomplete_details.reason == "max_output_tokens"


# --- SSE framing ---------------------------------------------------------------------------


async def test_raw_sse_records(
    http: httpx2.AsyncClient, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("Hm."), text("abc", chunk_size=1))

    async with http.stream(
        "POST", "/responses", json={"model": backend.model, "input": "x", "stream": True}
    ) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        body = "".join([chunk async for chunk in reply.aiter_text()])

    assert body.endswith("\n\n")
    records = body.strip("\n").split("\n\n")
    assert records[-1] == "data: [DONE]"
    payloads: list[dict[str, Any]] = []
    for record in records[:-1]:
        event_line, data_line = record.split("\n")
        assert event_line.startswith("event: ")
        assert data_line.startswith("data: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert event_line.removeprefix("event: ") == data["type"]
        payloads.append(data)
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert payloads[0]["type"] == "response.created"
    assert payloads[-1]["type"] == "response.completed"
    deltas = [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"]
    assert deltas == ["a", "b", "c"]


# --- the final response --------------------------------------------------------------------


async def test_stream_helper_and_final_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("Counting."), text("one two three", chunk_size=4))

    deltas: list[str] = []
    async with client.responses.stream(model=backend.model, input="Count") as stream:
        async for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = await stream.get_final_response()

    assert deltas == ["one ", "two ", "thre", "e"]
    assert final.status == "completed"
    assert final.output_text == "one two three"
    assert [item.type for item in final.output] == ["reasoning", "message"]


async def test_streamed_final_response_equals_stored_one(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(reasoning("Plan."), text("Calling."), tool_call("get_weather", {"c": 1}))

    events = await collect(client, backend, tools=[WEATHER], metadata={"k": "v"})
    final = final_of(events)
    stored = await client.responses.retrieve(final.id)

    assert final.status == "completed"
    assert stored.model_dump() == final.model_dump()
    done_items = [e.item for e in events if e.type == "response.output_item.done"]
    assert final.output == done_items


async def test_non_streaming_reply_equals_collected_stream(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    turn: list[TurnPart] = [
        reasoning("Think.", chunk_size=2),
        text("Sure, ", chunk_size=3),
        refusal("but not that."),
        tool_call("get_weather", {"city": "Paris"}, call_id="call_same", chunk_size=4),
    ]
    scripted.add_turn(*turn)
    scripted.add_turn(*turn)

    events = await collect(client, backend, tools=[WEATHER], temperature=0.2)
    streamed = final_of(events)
    plain = await client.responses.create(
        model=backend.model, input="Hi", tools=[WEATHER], temperature=0.2
    )

    assert plain.status == streamed.status == "completed"
    assert [item.type for item in plain.output] == ["reasoning", "message", "function_call"]
    assert without_ids(plain) == without_ids(streamed)
    assert plain.usage == streamed.usage
    ignored = {"id", "created_at", "completed_at", "output"}
    assert plain.model_dump(exclude=ignored) == streamed.model_dump(exclude=ignored)


# --- failure mid-stream --------------------------------------------------------------------


async def test_backend_failure_mid_stream_fails_the_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(text("partial answ", chunk_size=4), break_stream())

    events = await collect(client, backend)

    assert "response.output_text.delta" in types(events)
    assert events[-1].type == "response.failed"
    final = final_of(events)
    assert final.status == "failed"
    assert final.error is not None
    assert final.error.code == "server_error"
    assert final.error.message
    stored = await client.responses.retrieve(final.id)
    assert stored.status == "failed"
    assert stored.error == final.error
    # What was streamed is kept: the message is closed on the stream and stored, incomplete.
    done = [e for e in events if e.type == "response.output_item.done"]
    assert [e.item.status for e in done] == ["incomplete"]  # type: ignore[union-attr]
    assert stored.output_text == final.output_text == "partial answ"
    assert [item.status for item in stored.output] == ["incomplete"]  # type: ignore[union-attr]
