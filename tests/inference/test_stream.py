"""OpenAICompatibleProvider.stream against the fake backend over real HTTP: chunks out."""

from __future__ import annotations

import dataclasses
import json

import pytest

from agentloom.inference.base import (
    Finish,
    FinishReason,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TokenLogprob,
    ToolCall,
    ToolCallDelta,
    TopLogprob,
    Usage,
)
from agentloom.inference.openai_compatible import OpenAICompatibleProvider
from agentloom.inference.scripted import (
    ScriptedModel,
    finish,
    invalid_chunk,
    reasoning,
    refusal,
    text,
    tool_call,
    usage,
)
from agentloom.testing.backend import FakeBackend, ReasoningField
from tests.inference.support import ask, assemble, collect, raw_chunk


async def test_text_arrives_in_the_backends_pieces(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(text("Hello, world", chunk_size=5), usage(10, 3))

    chunks = await collect(provider)

    assert chunks == [
        TextDelta("Hello"),
        TextDelta(", wor"),
        TextDelta("ld"),
        Finish("stop"),
        Usage(input_tokens=10, output_tokens=3),
    ]


async def test_usage_chunk_is_asked_for_and_read_with_its_details(
    scripted: ScriptedModel, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn("ok", usage(120, 40, cached_tokens=100, reasoning_tokens=25))

    chunks = await collect(provider)

    assert backend.last_request["stream_options"] == {"include_usage": True}
    assert chunks[-1] == Usage(
        input_tokens=120, output_tokens=40, cached_tokens=100, reasoning_tokens=25
    )


async def test_tool_calls_are_assembled_from_deltas(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(
        tool_call("get_weather", {"city": "Paris"}, "call_1", chunk_size=4),
        tool_call("get_time", {"zone": "Europe/Paris"}, "call_2", chunk_size=3),
    )

    chunks = await collect(provider)

    assert assemble(chunks) == [
        ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="call_2", name="get_time", arguments='{"zone": "Europe/Paris"}'),
    ]
    assert sum(isinstance(c, ToolCallDelta) for c in chunks) > 2
    assert Finish("tool_calls") in chunks


async def test_interleaved_tool_call_deltas_keep_their_index(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(
        ToolCallDelta(0, "call_a", "first", '{"x"'),
        ToolCallDelta(1, "call_b", "second", '{"y"'),
        ToolCallDelta(0, arguments=": 1}"),
        ToolCallDelta(1, arguments=": 2}"),
    )

    chunks = await collect(provider)

    assert assemble(chunks) == [
        ToolCall(id="call_a", name="first", arguments='{"x": 1}'),
        ToolCall(id="call_b", name="second", arguments='{"y": 2}'),
    ]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_fields_become_reasoning_deltas(
    field: ReasoningField,
    scripted: ScriptedModel,
    backend: FakeBackend,
    provider: OpenAICompatibleProvider,
) -> None:
    backend.reasoning_field = field
    scripted.add_turn(reasoning("Think first.", chunk_size=6), "Answer.")

    chunks = await collect(provider)

    assert chunks[:3] == [ReasoningDelta("Think "), ReasoningDelta("first."), TextDelta("Answer.")]


async def test_refusal_becomes_refusal_deltas(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(refusal("I can't help with that.", chunk_size=12))

    chunks = await collect(provider)

    assert chunks[:2] == [RefusalDelta("I can't help"), RefusalDelta(" with that.")]


async def test_logprobs_are_read_with_their_top_alternatives(
    scripted: ScriptedModel, backend: FakeBackend, provider: OpenAICompatibleProvider
) -> None:
    top = (TopLogprob("Hi", -0.1, (72, 105)), TopLogprob("Hello", -2.5, None))
    token = TokenLogprob("Hi", -0.1, (72, 105), top)
    scripted.add_turn(TextDelta("Hi", (token,)))

    chunks = await collect(provider, dataclasses.replace(ask(), top_logprobs=2))

    assert backend.last_request["logprobs"] is True
    assert backend.last_request["top_logprobs"] == 2
    assert chunks[0] == TextDelta("Hi", (token,))


@pytest.mark.parametrize("reason", ["stop", "length", "tool_calls", "content_filter"])
async def test_finish_reasons_pass_through(
    reason: FinishReason, scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn("partial", finish(reason))

    chunks = await collect(provider)

    assert [c for c in chunks if isinstance(c, Finish)] == [Finish(reason)]


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ("function_call", "tool_calls"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("model_length", "length"),
        ("end_turn_of_some_backend", "stop"),
    ],
)
async def test_backend_specific_finish_reasons_are_normalised(
    sent: str, read: FinishReason, scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(invalid_chunk(raw_chunk({"content": "x"}, finish_reason=sent)))

    chunks = await collect(provider)

    assert chunks[:2] == [TextDelta("x"), Finish(read)]


async def test_empty_deltas_and_role_only_chunks_yield_nothing(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    scripted.add_turn(
        invalid_chunk(raw_chunk({"role": "assistant", "content": ""})),
        invalid_chunk(raw_chunk({})),
        invalid_chunk(json.dumps({"choices": [], "usage": None})),
        "done",
    )

    chunks = await collect(provider)

    assert chunks[0] == TextDelta("done")


def _call(call_id: str, name: str, arguments: str, index: int = 0) -> str:
    function = {"name": name, "arguments": arguments}
    return raw_chunk({"tool_calls": [{"index": index, "id": call_id, "function": function}]})


async def test_parallel_calls_sent_at_one_index_stay_apart(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    """Some backends send every parallel call at index 0, each with its own id."""
    scripted.add_turn(
        invalid_chunk(_call("c1", "get_weather", '{"city": "Oslo"}')),
        invalid_chunk(_call("c2", "get_time", "{}")),
        invalid_chunk(raw_chunk({}, finish_reason="tool_calls")),
    )

    calls = assemble(await collect(provider))

    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "get_weather", '{"city": "Oslo"}'),
        ("c2", "get_time", "{}"),
    ]


async def test_a_call_streamed_in_pieces_at_one_index_stays_one_call(
    scripted: ScriptedModel, provider: OpenAICompatibleProvider
) -> None:
    piece = raw_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]})
    scripted.add_turn(
        invalid_chunk(_call("c1", "get_weather", '{"city": ')),
        invalid_chunk(piece),
        invalid_chunk(raw_chunk({}, finish_reason="tool_calls")),
    )

    calls = assemble(await collect(provider))

    assert [(c.id, c.arguments) for c in calls] == [("c1", '{"city": "Oslo"}')]
