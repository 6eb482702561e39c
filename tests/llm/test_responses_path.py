"""The Responses path against the agentloom server (in-process), backed by the scripted model:
what goes on the wire, what the backend finally sees, and what comes back."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.inference.base import JsonSchemaFormat, NamedToolChoice
from agentloom.inference.scripted import (
    ScriptedModel,
    finish,
    raise_error,
    reasoning,
    text,
    tool_call,
    usage,
)
from agentloom.llm import (
    CallOptions,
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    Message,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolCallEvent,
)
from tests.llm.conftest import MakeLLM

WEATHER = FunctionTool(
    "get_weather",
    "Current weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    strict=True,
)


async def test_text_answer_with_instructions(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn("Hello there!")
    llm = server_llm()

    reply = await llm.chat(
        [Message.system("Be brief."), Message.developer("Use English."), Message.user("Hi")]
    )

    assert reply.text == "Hello there!"
    assert reply.finish_reason == "stop"
    assert reply.response_id is not None
    assert reply.response_id.startswith("resp_")
    assert reply.model is not None
    assert reply.metrics.path == "responses"
    assert wire[0]["instructions"] == "Be brief.\n\nUse English."
    assert wire[0]["input"] == [{"role": "user", "content": "Hi"}]
    assert wire[0]["store"] is False
    assert "previous_response_id" not in wire[0]
    sent = scripted.requests[-1].messages
    assert [(m.role, m.content) for m in sent] == [
        ("system", "Be brief.\n\nUse English."),
        ("user", "Hi"),
    ]


async def test_streamed_events_end_with_the_completed_response(
    server_llm: MakeLLM, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        reasoning("Think.", chunk_size=3),
        text("Sunny", chunk_size=2),
        tool_call("get_weather", {"city": "Paris"}, call_id="call_w1"),
    )
    llm = server_llm()

    events: list[LLMEvent] = [e async for e in llm.stream([Message.user("Paris?")], [WEATHER])]

    assert [e.text for e in events if isinstance(e, ReasoningDeltaEvent)] == ["Thi", "nk."]
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["Su", "nn", "y"]
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.call_id, c.name, c.parsed_arguments()) for c in calls] == [
        ("call_w1", "get_weather", {"city": "Paris"})
    ]
    last = events[-1]
    assert isinstance(last, LLMCompleted)
    assert sum(isinstance(e, LLMCompleted) for e in events) == 1
    assert last.response.text == "Sunny"
    assert last.response.reasoning == "Think."
    assert last.response.tool_calls == tuple(calls)
    assert last.response.finish_reason == "tool_calls"
    assert last.response.metrics.time_to_first_token_ms is not None


async def test_stateless_tool_round_trip_replays_everything(
    server_llm: MakeLLM,
    scripted: ScriptedModel,
    wire: list[dict[str, Any]],
    client: openai.AsyncOpenAI,
) -> None:
    scripted.add_turns(
        [reasoning("Let me look."), tool_call("get_weather", {"city": "Paris"}, "call_w1")],
        "It is sunny in Paris.",
    )
    llm = server_llm()
    history = [Message.system("Be brief."), Message.user("Weather in Paris?")]

    first = await llm.chat(history, [WEATHER])
    history += [first.message, Message.tool("call_w1", '{"sky": "sunny"}')]
    second = await llm.chat(history, [WEATHER])

    assert second.text == "It is sunny in Paris."
    (item,) = first.message.reasoning_items
    assert item.id.startswith("rs_")
    assert wire[1]["store"] is False
    assert wire[1]["input"] == [
        {"role": "user", "content": "Weather in Paris?"},
        item.item,  # verbatim, as the server returned it
        {
            "type": "function_call",
            "call_id": "call_w1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_w1", "output": '{"sky": "sunny"}'},
    ]
    assert wire[1]["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {**WEATHER.parameters, "additionalProperties": False},
            "strict": True,
        }
    ]
    seen = scripted.requests[-1].messages
    assert [m.role for m in seen] == ["system", "user", "assistant", "tool"]
    assert seen[2].reasoning == "Let me look."
    assert [(c.id, c.name) for c in seen[2].tool_calls] == [("call_w1", "get_weather")]
    assert seen[3].tool_call_id == "call_w1"
    for response_id in (first.response_id, second.response_id):  # store: false keeps nothing
        assert response_id is not None
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(response_id)


async def test_assistant_text_is_replayed_as_an_assistant_message(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turns("Hello!", "Bye!")
    llm = server_llm()
    history = [Message.user("Hi")]

    history.append((await llm.chat(history)).message)
    await llm.chat([*history, Message.user("Bye")])

    assert wire[1]["input"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye"},
    ]
    seen = scripted.requests[-1].messages
    assert [(m.role, m.content) for m in seen] == [
        ("user", "Hi"),
        ("assistant", "Hello!"),
        ("user", "Bye"),
    ]


async def test_usage_metrics(server_llm: MakeLLM, scripted: ScriptedModel) -> None:
    scripted.add_turn("Hi", usage(120, 30, cached_tokens=100, reasoning_tokens=12))
    llm = server_llm()

    metrics = (await llm.chat([Message.user("Hi")])).metrics

    assert (metrics.input_tokens, metrics.output_tokens) == (120, 30)
    assert (metrics.cached_tokens, metrics.reasoning_tokens) == (100, 12)
    assert metrics.total_tokens == 150
    assert metrics.path == "responses"
    assert metrics.model == llm.model
    assert metrics.latency_ms > 0


async def test_options_reach_the_backend(
    server_llm: MakeLLM, scripted: ScriptedModel, wire: list[dict[str, Any]]
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}))  # the named tool is forced
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    options = CallOptions(
        temperature=0.3,
        top_p=0.9,
        max_output_tokens=64,
        reasoning_effort="low",
        tool_choice=NamedToolChoice("get_weather"),
        parallel_tool_calls=False,
        response_format=JsonSchemaFormat("place", schema, strict=True),
    )
    llm = server_llm()

    await llm.chat([Message.user("Where?")], [WEATHER], options=options)

    body = wire[0]
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.3, 0.9, 64)
    assert body["reasoning"] == {"effort": "low"}
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["parallel_tool_calls"] is False
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "place", "schema": schema, "strict": True}
    }
    request = scripted.requests[-1]
    assert (request.temperature, request.top_p, request.max_tokens) == (0.3, 0.9, 64)
    assert request.reasoning_effort == "low"
    assert request.response_format == JsonSchemaFormat("place", schema, strict=True)


async def test_a_cut_off_answer_finishes_with_length(
    server_llm: MakeLLM, scripted: ScriptedModel
) -> None:
    scripted.add_turn("It is su", finish("length"))
    llm = server_llm()

    reply = await llm.chat([Message.user("Weather?")])

    assert reply.text == "It is su"
    assert reply.finish_reason == "length"


FAILURES: list[tuple[UpstreamError, type[UpstreamError]]] = [
    (UpstreamRateLimitError("slow down", status=429), UpstreamRateLimitError),
    (UpstreamRequestError("bad", status=400), UpstreamRequestError),
    (ContextLengthExceededError("too long", status=400), ContextLengthExceededError),
    (UpstreamError("boom", status=500), UpstreamError),
]


async def test_a_failed_response_is_a_typed_error(
    server_llm: MakeLLM, scripted: ScriptedModel
) -> None:
    llm = server_llm()
    for error, expected in FAILURES:  # one app for the table: each case is a response.failed
        scripted.add_turn(raise_error(error))

        with pytest.raises(UpstreamError) as caught:
            await llm.chat([Message.user("Hi")])

        assert type(caught.value) is expected
        assert error.message in caught.value.message


async def test_an_http_error_is_a_typed_error(server_llm: MakeLLM) -> None:
    llm = server_llm().with_model("no-such-model", path="responses")

    with pytest.raises(UpstreamRequestError) as caught:
        await llm.chat([Message.user("Hi")])

    assert caught.value.status == 404
    assert "no-such-model" in caught.value.message
