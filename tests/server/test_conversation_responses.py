"""``conversation`` on ``POST /v1/responses``: the model sees the conversation's items, then the
new input; a finished response adds its input and output to the conversation; one response at a
time runs on a conversation. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.responses import ResponseInputItemParam

from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, delay, raise_error, text, tool_call
from agentloom.server.app import create_app
from agentloom.storage import schema
from agentloom.storage.runner import scalar_count
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import BASE_URL, running
from tests.server.test_errors import the_error

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def messages(backend: FakeBackend, index: int = -1) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", backend.requests[index]["messages"])


async def items_of(client: openai.AsyncOpenAI, conversation_id: str) -> list[Any]:
    return [item async for item in client.conversations.items.list(conversation_id, order="asc")]


def summary(items: list[Any]) -> list[tuple[str, str]]:
    """(type or role, text) of each item."""
    out = []
    for item in items:
        if item.type == "message":
            out.append((item.role, item.content[0].text))
        elif item.type == "function_call":
            out.append(("function_call", item.name))
        else:
            out.append((item.type, getattr(item, "output", "")))
    return out


async def test_the_model_sees_the_conversation_then_the_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create(
        items=[
            {"type": "message", "role": "user", "content": "My name is Ada."},
            {"type": "message", "role": "assistant", "content": "Hello Ada."},
        ]
    )
    scripted.add_turn("You are Ada.")

    response = await client.responses.create(
        model=backend.model,
        conversation=conversation.id,
        instructions="Be brief.",
        input="What is my name?",
    )

    assert response.status == "completed"
    assert response.conversation is not None
    assert response.conversation.id == conversation.id
    assert messages(backend) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "What is my name?"},
    ]
    assert summary(await items_of(client, conversation.id)) == [
        ("user", "My name is Ada."),
        ("assistant", "Hello Ada."),
        ("user", "What is my name?"),
        ("assistant", "You are Ada."),
    ]
    # the response's own items are the conversation's items, under the same ids
    listed = await items_of(client, conversation.id)
    assert listed[-1].id == response.output[0].id
    stored = await client.responses.retrieve(response.id)
    assert stored.conversation is not None
    assert stored.conversation.id == conversation.id


async def test_turns_build_on_each_other(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turns("one", "two", "three")

    for word in ("a", "b", "c"):
        await client.responses.create(
            model=backend.model, conversation={"id": conversation.id}, input=word
        )

    assert [m["content"] for m in messages(backend)] == ["a", "one", "b", "two", "c"]
    assert [text for _, text in summary(await items_of(client, conversation.id))] == [
        "a",
        "one",
        "b",
        "two",
        "c",
        "three",
    ]


async def test_a_function_call_round_trip(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turn(tool_call("get_weather", {"city": "Paris"}, call_id="call_w"))
    scripted.add_turn("Sunny in Paris.")
    tools = [cast("Any", WEATHER_TOOL)]

    first = await client.responses.create(
        model=backend.model, conversation=conversation.id, input="Weather?", tools=tools
    )
    assert first.output[-1].type == "function_call"
    answer = cast(
        "list[ResponseInputItemParam]",
        [{"type": "function_call_output", "call_id": "call_w", "output": "sunny"}],
    )
    second = await client.responses.create(
        model=backend.model, conversation=conversation.id, input=answer, tools=tools
    )

    assert second.output_text == "Sunny in Paris."
    assert [m["role"] for m in messages(backend)] == ["user", "assistant", "tool"]
    assert summary(await items_of(client, conversation.id)) == [
        ("user", "Weather?"),
        ("function_call", "get_weather"),
        ("function_call_output", "sunny"),
        ("assistant", "Sunny in Paris."),
    ]


async def test_streamed_and_unstored_responses_join_the_conversation(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turns(text("streamed answer", chunk_size=4), "unstored answer")

    async with client.responses.stream(
        model=backend.model, conversation=conversation.id, input="streamed?"
    ) as stream:
        final = await stream.get_final_response()
    unstored = await client.responses.create(
        model=backend.model, conversation=conversation.id, input="unstored?", store=False
    )

    assert final.conversation is not None
    assert unstored.conversation is not None
    assert [text for _, text in summary(await items_of(client, conversation.id))] == [
        "streamed?",
        "streamed answer",
        "unstored?",
        "unstored answer",
    ]
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(unstored.id)


async def test_a_failed_response_adds_nothing_and_frees_the_conversation(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turn(raise_error(UpstreamError("backend down", status=500)))
    scripted.add_turn("recovered")

    with pytest.raises(openai.APIStatusError):
        await client.responses.create(
            model=backend.model, conversation=conversation.id, input="first try"
        )
    again = await client.responses.create(
        model=backend.model, conversation=conversation.id, input="second try"
    )

    assert again.output_text == "recovered"
    assert [text for _, text in summary(await items_of(client, conversation.id))] == [
        "second try",
        "recovered",
    ]


async def test_a_refused_request_frees_the_conversation(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    conversation = await client.conversations.create()
    orphan = {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}

    reply = await http.post(
        "/responses",
        json={"model": backend.model, "conversation": conversation.id, "input": [orphan]},
    )

    assert the_error(reply, 400)["param"] == "input[0]"
    added = await client.conversations.items.create(
        conversation.id, items=[{"role": "user", "content": "still writable"}]
    )
    assert added.data


async def test_input_may_not_repeat_a_conversation_item(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    conversation = await client.conversations.create(
        items=[{"type": "message", "role": "user", "content": "hi", "id": "msg_in_conv"}]
    )
    other = await client.conversations.create(
        items=[{"type": "message", "role": "user", "content": "yo", "id": "msg_elsewhere"}]
    )
    replayed = [{"type": "message", "role": "user", "content": "hi", "id": "msg_in_conv"}]
    foreign = [{"type": "message", "role": "user", "content": "yo", "id": "msg_elsewhere"}]

    for items in (replayed, foreign):
        reply = await http.post(
            "/responses",
            json={"model": backend.model, "conversation": conversation.id, "input": items},
        )
        error = the_error(reply, 400)
        assert (error["param"], error["code"]) == ("input[0].id", "duplicate_item")

    assert backend.requests == []
    assert len(await items_of(client, conversation.id)) == 1
    assert len(await items_of(client, other.id)) == 1


async def test_conversation_and_previous_response_id_are_exclusive(
    http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    reply = await http.post(
        "/responses",
        json={
            "model": backend.model,
            "input": "x",
            "conversation": "conv_abc",
            "previous_response_id": "resp_abc",
        },
    )

    assert the_error(reply, 400)["param"] == "previous_response_id"


async def test_a_response_deleted_later_leaves_the_conversation_whole(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turn("answer")
    response = await client.responses.create(
        model=backend.model, conversation=conversation.id, input="question"
    )

    await client.responses.delete(response.id)

    assert [text for _, text in summary(await items_of(client, conversation.id))] == [
        "question",
        "answer",
    ]


# --- one response at a time ------------------------------------------------------------------


async def test_concurrent_responses_never_interleave(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """Rule: while a response runs on a conversation, a second one is refused with 409
    ``conversation_locked`` (and so are item changes); nothing is lost or interleaved."""
    conversation = await client.conversations.create()
    scripted.respond_with(lambda request: [delay(0.3), "slow answer"])

    async def ask(word: str) -> Any:
        try:
            return await client.responses.create(
                model=backend.model, conversation=conversation.id, input=word
            )
        except openai.ConflictError as exc:
            return exc

    results = await asyncio.gather(*(ask(f"q{i}") for i in range(5)))

    done = [r for r in results if not isinstance(r, openai.ConflictError)]
    refused = [r for r in results if isinstance(r, openai.ConflictError)]
    assert len(done) == 1
    assert len(refused) == 4
    for exc in refused:
        assert isinstance(exc.body, dict)
        assert exc.body["code"] == "conversation_locked"
    items = summary(await items_of(client, conversation.id))
    assert len(items) == 2
    assert items[0][0] == "user"
    assert items[0][1] in {f"q{i}" for i in range(5)}
    assert items[1] == ("assistant", "slow answer")
    assert len(backend.requests) == 1


async def test_item_changes_wait_for_the_running_response(
    client: openai.AsyncOpenAI,
    http: httpx2.AsyncClient,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    conversation = await client.conversations.create(items=[{"role": "user", "content": "old"}])
    first_item = (await items_of(client, conversation.id))[0].id
    scripted.add_turn(delay(0.5), "done")
    running = asyncio.create_task(
        client.responses.create(model=backend.model, conversation=conversation.id, input="new")
    )
    await asyncio.sleep(0.2)

    path = f"/conversations/{conversation.id}"
    add = await http.post(f"{path}/items", json={"items": [{"role": "user", "content": "x"}]})
    remove = await http.delete(f"{path}/items/{first_item}")
    drop = await http.delete(path)
    metadata = await http.post(path, json={"metadata": {"k": "v"}})

    for reply in (add, remove, drop):
        assert the_error(reply, 409)["code"] == "conversation_locked"
    assert metadata.status_code == 200  # metadata is not part of the history
    await running
    assert [text for _, text in summary(await items_of(client, conversation.id))] == [
        "old",
        "new",
        "done",
    ]
    assert (
        await http.post(f"{path}/items", json={"items": [{"role": "user", "content": "x"}]})
    ).status_code == 200


async def test_a_stopped_servers_lock_is_taken_over(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, app: Any
) -> None:
    conversation = await client.conversations.create()
    database = app.state.runtime.database
    # a response of a server instance that no longer beats holds the conversation
    values = {"lock_response_id": "resp_ghost", "lock_instance_id": "inst_gone", "lock_at": 0.0}
    await database.runner.write(
        lambda conn: conn.execute(
            schema.conversations.update()
            .where(schema.conversations.c.id == conversation.id)
            .values(**values)
        )
    )
    scripted.add_turn("taken over")

    response = await client.responses.create(
        model=backend.model, conversation=conversation.id, input="anyone?"
    )

    assert response.output_text == "taken over"


async def test_history_is_reread_when_the_items_changed(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, app: Any
) -> None:
    conversation = await client.conversations.create()
    scripted.add_turns("first answer", "second answer")
    await client.responses.create(model=backend.model, conversation=conversation.id, input="one")
    # the cached history of the first turn is stale once an item is deleted
    items = await items_of(client, conversation.id)
    await client.conversations.items.delete(items[0].id, conversation_id=conversation.id)

    await client.responses.create(model=backend.model, conversation=conversation.id, input="two")

    assert [m["content"] for m in messages(backend)] == ["first answer", "two"]
    count = await app.state.runtime.database.runner.read(scalar_count(schema.conversation_items))
    assert count == 3


async def test_two_servers_sharing_the_database_hold_the_same_lock(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, settings: Any
) -> None:
    """A second server process (its own runtime, instance id and caches) on the same database:
    the lock is in the database, so the rule holds across processes too."""
    conversation = await client.conversations.create()
    scripted.respond_with(lambda request: [delay(0.3), "answer"])
    other_settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"instance_id": "inst_other"})}
    )
    async with (
        running(create_app(other_settings)) as other_app,
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=other_app), base_url=BASE_URL
        ) as other_http,
        openai.AsyncOpenAI(
            base_url=BASE_URL, api_key="unused", http_client=other_http, max_retries=0
        ) as other,
    ):

        async def ask(sdk: openai.AsyncOpenAI, word: str) -> Any:
            try:
                return await sdk.responses.create(
                    model=backend.model, conversation=conversation.id, input=word
                )
            except openai.ConflictError as exc:
                return exc

        results = await asyncio.gather(ask(client, "here"), ask(other, "there"))

        assert sum(isinstance(r, openai.ConflictError) for r in results) == 1
        # the other server sees the turn the first one wrote (its cache is checked by version)
        answer = await other.responses.create(
            model=backend.model, conversation=conversation.id, input="last"
        )
    assert answer.output_text == "answer"
    texts = [text for _, text in summary(await items_of(client, conversation.id))]
    assert len(texts) == 4
    assert texts[2:] == ["last", "answer"]
    assert [m["content"] for m in messages(backend)][-1] == "last"
    assert len(messages(backend)) == 3
