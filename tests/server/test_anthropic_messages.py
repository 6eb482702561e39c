"""Anthropic's Messages API on any backend, through the official ``anthropic`` package: plain
turns, streams (each event checked against the package's own types, in Anthropic's order),
tools and their results, thinking, stop sequences, token counting, and errors in Anthropic's
envelope, with ``x-api-key`` or a bearer key."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter
from starlette.applications import Starlette

from agentloom.config import Settings
from agentloom.inference.scripted import ScriptedModel, reasoning, text, tool_call
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import running
from tests.plugins.tenants import ADMIN, new_tenant, sdk

ROOT = "http://agentloom.test"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
EVENTS: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)


@pytest.fixture
async def messages(app: Starlette) -> AsyncIterator[anthropic.AsyncAnthropic]:
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ROOT) as raw:
        yield anthropic.AsyncAnthropic(
            base_url=ROOT, api_key="unused", http_client=raw, max_retries=0
        )


async def test_a_plain_turn(
    messages: anthropic.AsyncAnthropic, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello there!")

    answer = await messages.messages.create(
        model=backend.model,
        max_tokens=64,
        system="Be brief.",
        messages=HI,
        metadata={"user_id": "u-1"},
        extra_body={"temperature": 0.2},  # this package's release takes it no more as such
    )

    assert answer.type == "message"
    assert answer.id.startswith("msg_")
    assert [block.type for block in answer.content] == ["text"]
    assert answer.content[0].text == "Hello there!"  # type: ignore[union-attr]
    assert answer.stop_reason == "end_turn"
    assert answer.model == backend.model
    assert answer.usage.output_tokens > 0
    sent = backend.requests[-1]
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert (sent["max_tokens"], sent["temperature"], sent["user"]) == (64, 0.2, "u-1")


async def test_a_stream_is_anthropics_events_in_order(
    app: Starlette, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn([*text("It is ", chunk_size=3), tool_call("get_weather", {"city": "Oslo"})])
    body = {
        "model": backend.model,
        "max_tokens": 100,
        "messages": HI,
        "tools": [WEATHER],
        "stream": True,
    }

    events = await _raw_stream(app, body)

    names = [name for name, _ in events]
    for name, data in events:
        assert name == data["type"]
        if name != "ping":  # the package's stream event union leaves pings out
            assert EVENTS.validate_python(data).type == name  # the anthropic package's types
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    blocks = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in blocks] == ["text", "tool_use"]
    assert names.count("content_block_stop") == 2
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert "".join(d.get("text", "") for d in deltas) == "It is "
    assert json.loads("".join(d.get("partial_json", "") for d in deltas)) == {"city": "Oslo"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


async def test_the_sdks_stream_helper_collects_the_message(
    messages: anthropic.AsyncAnthropic, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn([*reasoning("Think first."), *text("Done.", chunk_size=2)])

    async with messages.messages.stream(
        model=backend.model,
        max_tokens=200,
        messages=HI,
        thinking={"type": "enabled", "budget_tokens": 1024},
    ) as stream:
        said = [piece async for piece in stream.text_stream]
        final = await stream.get_final_message()

    assert "".join(said) == "Done."
    assert [block.type for block in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "Think first."  # type: ignore[union-attr]
    assert final.stop_reason == "end_turn"
    assert backend.requests[-1]["reasoning_effort"] == "medium"


async def test_tools_and_their_results(
    messages: anthropic.AsyncAnthropic, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(tool_call("get_weather", {"city": "Oslo"}, call_id="call_1"))
    scripted.add_turn("Sunny in Oslo.")

    first = await messages.messages.create(
        model=backend.model,
        max_tokens=100,
        messages=HI,
        tools=[WEATHER],
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
    )
    use = first.content[-1]
    assert use.type == "tool_use"
    then = await messages.messages.create(
        model=backend.model,
        max_tokens=100,
        tools=[WEATHER],
        messages=[
            *HI,
            {"role": "assistant", "content": [block.model_dump() for block in first.content]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": use.id, "content": "sunny"},
                    {"type": "text", "text": "And now?"},
                ],
            },
        ],
    )

    assert (use.name, use.input, first.stop_reason) == ("get_weather", {"city": "Oslo"}, "tool_use")
    asked = backend.requests[0]
    assert (asked["tool_choice"], asked["parallel_tool_calls"]) == ("required", False)
    assert asked["tools"][0]["function"]["parameters"] == WEATHER["input_schema"]
    told = backend.requests[-1]["messages"]
    assert told[1]["tool_calls"][0]["id"] == use.id
    assert told[2] == {"role": "tool", "tool_call_id": use.id, "content": "sunny"}
    assert told[3]["role"] == "user"
    assert then.content[0].text == "Sunny in Oslo."  # type: ignore[union-attr]


async def test_stop_sequences_and_reasoning_left_out_without_thinking(
    messages: anthropic.AsyncAnthropic, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn([*reasoning("hidden"), *text("One, two")])

    answer = await messages.messages.create(
        model=backend.model, max_tokens=50, messages=HI, stop_sequences=["three"]
    )

    assert [block.type for block in answer.content] == ["text"]
    assert backend.requests[-1]["stop"] == ["three"]


async def test_count_tokens(messages: anthropic.AsyncAnthropic, backend: FakeBackend) -> None:
    counted = await messages.messages.count_tokens(
        model=backend.model, messages=HI, system="Be brief."
    )
    assert counted.input_tokens > 0


async def test_errors_are_in_anthropics_envelope(
    messages: anthropic.AsyncAnthropic, app: Starlette, backend: FakeBackend
) -> None:
    with pytest.raises(anthropic.NotFoundError) as unknown:
        await messages.messages.create(model="no-such-model", max_tokens=5, messages=HI)
    with pytest.raises(anthropic.BadRequestError) as top_k:
        await messages.messages.create(
            model=backend.model, max_tokens=5, messages=HI, extra_body={"top_k": 3}
        )
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ROOT) as raw:
        missing = await raw.post("/v1/messages", json={"model": backend.model, "messages": HI})

    assert unknown.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    assert top_k.value.body["error"]["message"].startswith("top_k")  # type: ignore[index]
    assert missing.status_code == 400
    assert missing.json()["type"] == "error"
    assert missing.json()["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in missing.json()["error"]["message"]


async def test_keys_come_as_x_api_key_or_bearer(
    keyed: Settings, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("One")
    scripted.add_turn("Two")
    async with running(create_app(keyed)) as app:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url=ROOT) as raw:
            async with httpx2.AsyncClient(
                transport=httpx2.ASGITransport(app=app), base_url=f"{ROOT}/v1"
            ) as admin_raw:
                tenant = await new_tenant(admin_raw, "claude")
                assert sdk(admin_raw, admin_api_key=ADMIN) is not None
            by_key = anthropic.AsyncAnthropic(
                base_url=ROOT, api_key=tenant.key, http_client=raw, max_retries=0
            )
            by_token = anthropic.AsyncAnthropic(
                base_url=ROOT, auth_token=tenant.key, http_client=raw, max_retries=0
            )
            wrong = anthropic.AsyncAnthropic(
                base_url=ROOT, api_key="sk-wrong-key-000", http_client=raw, max_retries=0
            )
            one = await by_key.messages.create(model=backend.model, max_tokens=5, messages=HI)
            two = await by_token.messages.create(model=backend.model, max_tokens=5, messages=HI)
            with pytest.raises(anthropic.AuthenticationError) as refused:
                await wrong.messages.create(model=backend.model, max_tokens=5, messages=HI)

    assert [one.content[0].text, two.content[0].text] == ["One", "Two"]  # type: ignore[union-attr]
    assert refused.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]


async def _raw_stream(app: Starlette, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed answer: each ``event:`` name and its parsed data."""
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ROOT) as raw:
        reply = await raw.post("/v1/messages", json=body, headers={"x-api-key": "unused"})
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = []
    for record in reply.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in record.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events
