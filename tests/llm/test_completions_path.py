"""The Chat Completions path against the fake backend over a real socket (``LLM(base_url=...)``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentloom.errors import (
    ContextLengthExceededError,
    UpstreamError,
    UpstreamRateLimitError,
    UpstreamRequestError,
)
from agentloom.inference.base import NamedToolChoice
from agentloom.inference.scripted import (
    ScriptedModel,
    raise_error,
    reasoning,
    text,
    tool_call,
    usage,
)
from agentloom.llm import (
    LLM,
    CallOptions,
    FunctionTool,
    LLMCompleted,
    LLMEvent,
    Message,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolCallEvent,
)
from agentloom.testing.backend import FakeBackend

ADD = FunctionTool(
    "add",
    "Add two numbers.",
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)


@pytest.fixture
async def llm(backend: FakeBackend) -> AsyncIterator[LLM]:
    async with LLM(backend.model, base_url=backend.base_url, max_retries=0) as model:
        yield model


async def test_routes_an_unknown_model_to_chat_completions(llm: LLM) -> None:
    assert llm.path == "completions"


async def test_text_answer(llm: LLM, backend: FakeBackend, scripted: ScriptedModel) -> None:
    scripted.add_turn("Hello there!")

    reply = await llm.chat([Message.developer("Be brief."), Message.user("Hi")])

    assert reply.text == "Hello there!"
    assert reply.finish_reason == "stop"
    assert reply.response_id is None
    assert reply.metrics.path == "completions"
    assert backend.last_request["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]


async def test_streamed_deltas(llm: LLM, scripted: ScriptedModel) -> None:
    scripted.add_turn(reasoning("Hmm.", chunk_size=2), text("Hello!", chunk_size=2))

    events: list[LLMEvent] = [e async for e in llm.stream([Message.user("Hi")])]

    assert [e.text for e in events if isinstance(e, ReasoningDeltaEvent)] == ["Hm", "m."]
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["He", "ll", "o!"]
    last = events[-1]
    assert isinstance(last, LLMCompleted)
    assert last.response.text == "Hello!"
    assert last.response.reasoning == "Hmm."
    assert last.response.metrics.time_to_first_token_ms is not None


async def test_tool_calls_keep_their_call_ids(
    llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns(
        [
            tool_call("add", {"a": 1, "b": 2}, "call_a", chunk_size=4),
            tool_call("add", {"a": 3, "b": 4}, "call_b"),
        ],
        "3 and 7.",
    )
    history = [Message.user("1+2 and 3+4?")]

    events = [e async for e in llm.stream(history, [ADD])]
    first = events[-1]
    assert isinstance(first, LLMCompleted)
    calls = first.response.tool_calls
    assert [(c.call_id, c.parsed_arguments()) for c in calls] == [
        ("call_a", {"a": 1, "b": 2}),
        ("call_b", {"a": 3, "b": 4}),
    ]
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == list(calls)
    assert first.response.finish_reason == "tool_calls"

    history += [first.response.message, Message.tool("call_a", "3"), Message.tool("call_b", "7")]
    second = await llm.chat(history, [ADD])

    assert second.text == "3 and 7."
    sent = backend.last_request["messages"]
    assert isinstance(sent, list)
    assert [m["tool_call_id"] for m in sent[2:]] == ["call_a", "call_b"]  # type: ignore[index]
    assert backend.last_request["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "parameters": ADD.parameters,
                "description": "Add two numbers.",
            },
        }
    ]


async def test_reasoning_goes_back_to_the_backend(
    llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns([reasoning("Greeting."), "Hi!"], "Bye!")
    history = [Message.user("Hi")]
    history.append((await llm.chat(history)).message)

    await llm.chat([*history, Message.user("Bye")])

    sent = backend.last_request["messages"]
    assert isinstance(sent, list)
    assert sent[1] == {"role": "assistant", "content": "Hi!", "reasoning_content": "Greeting."}


async def test_usage_metrics_with_cached_and_reasoning_tokens(
    llm: LLM, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hi", usage(200, 40, cached_tokens=150, reasoning_tokens=25))

    metrics = (await llm.chat([Message.user("Hi")])).metrics

    assert (metrics.input_tokens, metrics.output_tokens, metrics.total_tokens) == (200, 40, 240)
    assert (metrics.cached_tokens, metrics.reasoning_tokens) == (150, 25)
    assert metrics.model == llm.model
    assert metrics.latency_ms > 0


async def test_options_reach_the_backend(
    llm: LLM, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("add", {"a": 1, "b": 1}))
    options = CallOptions(
        temperature=0.2,
        max_output_tokens=32,
        tool_choice=NamedToolChoice("add"),
        parallel_tool_calls=False,
        response_format="json_object",
    )

    await llm.chat([Message.user("1+1")], [ADD], options=options)

    body = backend.last_request
    assert (body["temperature"], body["max_tokens"]) == (0.2, 32)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["parallel_tool_calls"] is False
    assert body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("error", "expected", "status"),
    [
        (
            UpstreamRateLimitError("slow down", status=429, retry_after=7),
            UpstreamRateLimitError,
            429,
        ),
        (UpstreamRequestError("bad field", status=400), UpstreamRequestError, 400),
        (
            ContextLengthExceededError("context length exceeded", status=400),
            ContextLengthExceededError,
            400,
        ),
        (UpstreamError("boom", status=500), UpstreamError, 500),
    ],
    ids=["429", "400", "context-length", "500"],
)
async def test_upstream_errors_are_typed(
    llm: LLM,
    scripted: ScriptedModel,
    error: UpstreamError,
    expected: type[UpstreamError],
    status: int,
) -> None:
    scripted.add_turn(raise_error(error))

    with pytest.raises(UpstreamError) as caught:
        await llm.chat([Message.user("Hi")])

    assert type(caught.value) is expected
    assert caught.value.status == status
    assert error.message in caught.value.message
    if isinstance(error, UpstreamRateLimitError):
        assert caught.value.retry_after == 7
