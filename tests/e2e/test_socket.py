"""The official ``openai`` client against agentloom over a real socket (uvicorn + TCP)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import httpx2
import openai

from agentloom.inference.scripted import ScriptedModel, delay, text
from agentloom.testing.backend import FakeBackend
from tests.e2e.support import received

WAIT = 5.0  # seconds any eventual condition gets before the test fails


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Poll ``check`` until it holds, for at most ``WAIT`` seconds."""
    deadline = time.monotonic() + WAIT
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {WAIT}s waiting for {what}")
        await asyncio.sleep(0.02)


async def test_create_over_a_socket(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turn("Hello over TCP.")

    response = await live_client.responses.create(model=backend.model, input="Hi")

    assert response.status == "completed"
    assert response.output_text == "Hello over TCP."
    stored = await live_client.responses.retrieve(response.id)
    assert stored.output_text == "Hello over TCP."
    assert received(backend)[0]["messages"][-1] == {"role": "user", "content": "Hi"}


async def test_stream_with_the_sdk_helper(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turn(text("one two three", chunk_size=4))

    deltas: list[str] = []
    types: list[str] = []
    async with live_client.responses.stream(model=backend.model, input="Count") as stream:
        async for event in stream:
            types.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = await stream.get_final_response()

    assert deltas == ["one ", "two ", "thre", "e"]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    assert final.status == "completed"
    assert final.output_text == "one two three"
    assert (await live_client.responses.retrieve(final.id)).status == "completed"


async def test_raw_sse_over_a_socket(
    scripted: ScriptedModel, backend: FakeBackend, live_url: str
) -> None:
    scripted.add_turn(text("abc", chunk_size=1))

    records: list[tuple[str, str]] = []
    async with (
        httpx2.AsyncClient(base_url=live_url, timeout=10.0) as http,
        http.stream(
            "POST", "/responses", json={"model": backend.model, "input": "x", "stream": True}
        ) as reply,
    ):
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        body = "".join([chunk async for chunk in reply.aiter_text()])

    for record in body.strip().split("\n\n"):
        lines = record.split("\n")
        if lines == ["data: [DONE]"]:
            records.append(("", "[DONE]"))
            continue
        assert lines[0].startswith("event: ")
        assert lines[1].startswith("data: ")
        records.append((lines[0].removeprefix("event: "), lines[1].removeprefix("data: ")))

    assert records[-1] == ("", "[DONE]")
    events = [(name, json.loads(data)) for name, data in records[:-1]]
    assert all(name == data["type"] for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    deltas = [data["delta"] for name, data in events if name == "response.output_text.delta"]
    assert deltas == ["a", "b", "c"]
    assert events[-1][0] == "response.completed"


async def test_client_disconnect_cancels_the_response_and_the_backend_call(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    scripted.add_turn("first", delay(2), "second")

    response_id: str | None = None
    async with live_client.responses.stream(model=backend.model, input="Go") as stream:
        async for event in stream:
            if event.type == "response.created":
                response_id = event.response.id
            if event.type == "response.output_text.delta":
                assert event.delta == "first"
                break  # leaving the block closes the stream: the client goes away
    assert response_id is not None

    async def backend_saw_disconnect() -> bool:
        return backend.disconnects > 0

    async def stored_as_cancelled() -> bool:
        try:
            stored = await live_client.responses.retrieve(response_id)
        except openai.NotFoundError:
            return False
        return stored.status == "cancelled"

    await eventually(backend_saw_disconnect, "the backend to see the client disconnect")
    await eventually(stored_as_cancelled, "the response to be stored as cancelled")
    stored = await live_client.responses.retrieve(response_id)
    assert stored.error is None  # cancelled is a status, not an error (as OpenAI's cancel)
    # What was streamed before the client left is kept, marked incomplete.
    assert [item.type for item in stored.output] == ["message"]
    message = stored.output[0]
    assert message.type == "message"
    assert message.status == "incomplete"
    assert stored.output_text == "first"


async def test_a_disconnect_on_a_conversation_adds_nothing_and_frees_it(
    scripted: ScriptedModel, backend: FakeBackend, live_client: openai.AsyncOpenAI
) -> None:
    conversation = await live_client.conversations.create()
    scripted.add_turn("first", delay(2), "second")

    async with live_client.responses.stream(
        model=backend.model, input="Go", conversation=conversation.id
    ) as stream:
        async for event in stream:
            if event.type == "response.output_text.delta":
                break  # the client goes away mid-stream

    async def writable() -> bool:
        try:
            await live_client.conversations.items.create(
                conversation.id, items=[{"role": "user", "content": "after"}]
            )
        except openai.ConflictError:
            return False
        return True

    await eventually(writable, "the conversation to be released")
    items = [i async for i in live_client.conversations.items.list(conversation.id)]
    assert [i.content[0].text for i in items] == ["after"]  # type: ignore[union-attr]
