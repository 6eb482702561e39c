"""The chat completions body the provider sends, as the fake backend received it over HTTP."""

from __future__ import annotations

import dataclasses

import pytest

from agentloom.inference.base import (
    ChatMessage,
    ChatRequest,
    FilePart,
    FunctionSpec,
    ImagePart,
    JSONObject,
    JsonSchemaFormat,
    NamedToolChoice,
    ResponseFormat,
    TextPart,
    ToolCall,
    ToolChoice,
)
from agentloom.inference.chat_body import chat_body
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.testing.backend import FakeBackend
from tests.inference.support import ask, collect

WEATHER = FunctionSpec(
    name="get_weather",
    description="Weather of a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    strict=True,
)
WEATHER_JSON: JSONObject = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "description": "Weather of a city.",
        "strict": True,
    },
}


async def sent(
    provider: OpenAICompatibleProvider, backend: FakeBackend, request: ChatRequest
) -> JSONObject:
    await collect(provider, request)
    return backend.last_request


async def test_minimal_body_streams_and_omits_unset_fields(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    body = await sent(provider, backend, ask("Hello"))

    assert body == {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "Hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_tools_are_sent_as_functions(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    plain = FunctionSpec(name="noop", description=None, parameters={"type": "object"})
    request = dataclasses.replace(ask(), tools=(WEATHER, plain))

    body = await sent(provider, backend, request)

    assert body["tools"] == [
        WEATHER_JSON,
        {"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}},
    ]
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        (NamedToolChoice("get_weather"), {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
async def test_tool_choice_forms(
    choice: ToolChoice, wire: object, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    request = dataclasses.replace(ask(), tools=(WEATHER,), tool_choice=choice)

    body = await sent(provider, backend, request)

    assert body["tool_choice"] == wire


@pytest.mark.parametrize("parallel", [True, False])
async def test_parallel_tool_calls_is_sent_with_tools(
    parallel: bool, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    request = dataclasses.replace(ask(), tools=(WEATHER,), parallel_tool_calls=parallel)

    body = await sent(provider, backend, request)

    assert body["parallel_tool_calls"] is parallel


def test_tool_settings_without_tools_are_left_out() -> None:
    request = dataclasses.replace(ask(), tool_choice="none", parallel_tool_calls=False)

    body = chat_body(request)

    assert not {"tools", "tool_choice", "parallel_tool_calls"} & body.keys()


@pytest.mark.parametrize(
    ("fmt", "wire"),
    [
        ("json_object", {"type": "json_object"}),
        (
            JsonSchemaFormat(name="city", schema={"type": "object"}),
            {"type": "json_schema", "json_schema": {"name": "city", "schema": {"type": "object"}}},
        ),
        (
            JsonSchemaFormat(
                name="city", schema={"type": "object"}, strict=True, description="A city."
            ),
            {
                "type": "json_schema",
                "json_schema": {
                    "name": "city",
                    "schema": {"type": "object"},
                    "strict": True,
                    "description": "A city.",
                },
            },
        ),
    ],
)
async def test_response_formats(
    fmt: ResponseFormat, wire: JSONObject, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    body = await sent(provider, backend, dataclasses.replace(ask(), response_format=fmt))

    assert body["response_format"] == wire


def test_text_response_format_is_the_default_and_left_out() -> None:
    assert "response_format" not in chat_body(ask())


async def test_sampling_and_identity_fields(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    request = dataclasses.replace(
        ask(),
        temperature=0.2,
        top_p=0.9,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        max_tokens=50,
        reasoning_effort="low",
        user="u-1",
        prompt_cache_key="cache-1",
        safety_identifier="safe-1",
        service_tier="flex",
    )

    body = await sent(provider, backend, request)

    assert {k: v for k, v in body.items() if k not in ("model", "messages")} == {
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.2,
        "top_p": 0.9,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "max_tokens": 50,
        "reasoning_effort": "low",
        "user": "u-1",
        "prompt_cache_key": "cache-1",
        "safety_identifier": "safe-1",
        "service_tier": "flex",
    }


def test_zero_top_logprobs_asks_for_logprobs_only() -> None:
    body = chat_body(dataclasses.replace(ask(), top_logprobs=0))

    assert body["logprobs"] is True
    assert "top_logprobs" not in body


async def test_image_and_file_parts(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    parts = (
        TextPart("What is this?"),
        ImagePart("https://example.com/cat.png", detail="low"),
        FilePart(filename="a.pdf", data="data:application/pdf;base64,JVBERi0="),
        FilePart(filename=None, data=None, url="https://example.com/b.pdf"),
    )
    request = dataclasses.replace(ask(), messages=(ChatMessage(role="user", content=parts),))

    body = await sent(provider, backend, request)

    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {
                    "type": "image_url",
                    "image_url": {"url": "https://example.com/cat.png", "detail": "low"},
                },
                {
                    "type": "file",
                    "file": {
                        "filename": "a.pdf",
                        "file_data": "data:application/pdf;base64,JVBERi0=",
                    },
                },
                {"type": "file", "file": {"file_url": "https://example.com/b.pdf"}},
            ],
        }
    ]


async def test_tool_round_trip_messages(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    call = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
    messages = (
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="Weather in Paris?"),
        ChatMessage(role="assistant", tool_calls=(call,), reasoning="Need the tool."),
        ChatMessage(role="tool", content="sunny", tool_call_id="call_1"),
    )

    body = await sent(provider, backend, dataclasses.replace(ask(), messages=messages))

    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
            "reasoning_content": "Need the tool.",
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
    ]


async def test_a_full_request_reads_back_unchanged(
    backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    request = dataclasses.replace(
        ask(),
        tools=(WEATHER,),
        tool_choice=NamedToolChoice("get_weather"),
        parallel_tool_calls=False,
        max_tokens=10,
        top_logprobs=3,
        response_format=JsonSchemaFormat(name="w", schema={"type": "object"}, strict=True),
        reasoning_effort="high",
    )

    await collect(provider, request)

    assert backend.chat_requests == [request]


def test_metadata_and_extra_body_are_sent_extra_body_last() -> None:
    request = ChatRequest(
        model="m",
        messages=(ChatMessage("user", "Hi"),),
        temperature=0.5,
        metadata={"run": "42"},
        extra_body={"seed": 7, "temperature": 0.1},
    )

    body = chat_body(request)

    assert body["metadata"] == {"run": "42"}
    assert (body["seed"], body["temperature"]) == (7, 0.1)
    assert "metadata" not in chat_body(ChatRequest(model="m", messages=request.messages))


def test_a_model_calls_request_keeps_every_other_field() -> None:
    """``ChatRequest.calling`` (the agent loop's request of each model call) is
    ``dataclasses.replace`` of its three fields: every other field, set or not, is kept."""
    full = ChatRequest(
        model="m",
        messages=(ChatMessage(role="user", content="Hi"),),
        tools=(WEATHER,),
        tool_choice=NamedToolChoice("get_weather"),
        parallel_tool_calls=False,
        temperature=0.5,
        top_p=0.9,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        max_tokens=7,
        top_logprobs=2,
        response_format="json_object",
        reasoning_effort="low",
        user="u",
        prompt_cache_key="k",
        safety_identifier="s",
        service_tier="flex",
        stop=("END",),
        metadata={"run": "1"},
        extra_body={"seed": 7},
    )
    messages = (ChatMessage(role="user", content="Again"),)
    for request in (full, ChatRequest(model="m", messages=())):
        made = request.calling(messages, 42, True)
        assert made == dataclasses.replace(
            request, messages=messages, max_tokens=42, collected=True
        )
    assert {f.name for f in dataclasses.fields(ChatRequest)} == {
        *(f.name for f in dataclasses.fields(full) if getattr(full, f.name) != f.default),
        "collected",
    }, "a field of ChatRequest the test does not set: set it above (and in `calling`)"
