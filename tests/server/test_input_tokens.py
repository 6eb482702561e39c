"""``POST /v1/responses/input_tokens``: the token count of the request a create would send,
made with the backend's own tokenizer where it has one. On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import InputTokenCountResponse

from agentloom.inference.scripted import ScriptedModel, prompt_tokens, usage
from agentloom.testing.backend import FakeBackend
from tests.server.test_errors import the_error

TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


async def test_counts_with_the_backends_tokenizer(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    raw = await client.responses.input_tokens.with_raw_response.count(
        model=backend.model, input="How many tokens is this?", instructions="Be brief."
    )
    counted = raw.parse()

    assert isinstance(counted, InputTokenCountResponse)
    assert counted.object == "response.input_tokens"
    sent = backend.tokenize_chat_requests[-1]
    assert counted.input_tokens == prompt_tokens(sent)
    assert [m.role for m in sent.messages] == ["system", "user"]
    assert raw.headers["x-agentloom-token-count-method"] == "tokenizer"
    assert backend.requests == []  # no model call


async def test_the_count_is_what_a_create_would_report(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """The scripted backend reports the same number as usage when it answers."""
    scripted.add_turn("ok")
    tools: list[Any] = [TOOL]
    counted = await client.responses.input_tokens.count(
        model=backend.model, input="Weather in Paris?", tools=tools
    )

    created = await client.responses.create(
        model=backend.model, input="Weather in Paris?", tools=tools
    )

    assert created.usage is not None
    assert counted.input_tokens == created.usage.input_tokens
    without_tools = await client.responses.input_tokens.count(
        model=backend.model, input="Weather in Paris?"
    )
    assert without_tools.input_tokens < counted.input_tokens


async def test_history_of_a_chain_and_of_a_conversation_counts(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("A first answer that takes some tokens.", "second")
    first = await client.responses.create(model=backend.model, input="First question")
    conversation = await client.conversations.create(
        items=[{"role": "user", "content": "Remember the number 42, please."}]
    )

    alone = await client.responses.input_tokens.count(model=backend.model, input="Next?")
    chained = await client.responses.input_tokens.count(
        model=backend.model, input="Next?", previous_response_id=first.id
    )
    in_conversation = await client.responses.input_tokens.count(
        model=backend.model, input="Next?", conversation=conversation.id
    )

    assert alone.input_tokens < chained.input_tokens
    assert alone.input_tokens < in_conversation.input_tokens
    assert [m.role for m in backend.tokenize_chat_requests[-1].messages] == ["user", "user"]
    # counting never takes the conversation's lock nor adds anything to it
    await client.responses.create(model=backend.model, input="go", conversation=conversation.id)
    items = [i async for i in client.conversations.items.list(conversation.id)]
    assert len(items) == 3


async def test_without_tokenize_the_backends_usage_counts(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    backend.tokenize = False
    scripted.add_turn("x", usage(input_tokens=77, output_tokens=1))

    raw = await client.responses.input_tokens.with_raw_response.count(
        model=backend.model, input="count me"
    )

    assert raw.parse().input_tokens == 77
    assert raw.headers["x-agentloom-token-count-method"] == "usage"
    assert backend.requests[-1]["max_tokens"] == 1


async def test_model_may_be_left_out_when_one_model_is_served(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    counted = await client.responses.input_tokens.count(input="hello")

    assert counted.input_tokens > 0
    assert backend.tokenize_chat_requests[-1].model == backend.model


ERRORS: list[tuple[str, dict[str, Any], int, str | None, str | None]] = [
    ("unknown model", {"model": "nope", "input": "x"}, 404, "model", "model_not_found"),
    (
        "unknown previous response",
        {"model": "fake-model", "input": "x", "previous_response_id": "resp_nope"},
        404,
        "previous_response_id",
        "previous_response_not_found",
    ),
    (
        "unknown conversation",
        {"model": "fake-model", "input": "x", "conversation": "conv_nope"},
        404,
        "conversation",
        None,
    ),
    (
        "malformed conversation",
        {"model": "fake-model", "input": "x", "conversation": "nope"},
        400,
        "conversation",
        "invalid_value",
    ),
    (
        "orphan tool output",
        {
            "model": "fake-model",
            "input": [{"type": "function_call_output", "call_id": "c", "output": "x"}],
        },
        400,
        "input[0]",
        None,
    ),
    ("bad input", {"model": "fake-model", "input": 3}, 400, "input", "invalid_value"),
]


@pytest.mark.parametrize(
    ("payload", "status", "param", "code"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
)
async def test_errors(
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    payload: dict[str, Any],
    status: int,
    param: str | None,
    code: str | None,
) -> None:
    error = the_error(await http.post("/responses/input_tokens", json=payload), status)

    assert (error["param"], error["code"]) == (param, code)
    assert backend.tokenize_requests == []
