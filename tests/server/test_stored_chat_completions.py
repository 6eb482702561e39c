"""Chat completions created with ``store: true``, through the official client as at OpenAI:
``client.chat.completions.list / retrieve / update / delete`` and ``messages.list``, streamed
or not, filtered by model and metadata, paged, and a project's alone."""

from __future__ import annotations

import httpx2
import openai
import pytest

from agentloom.inference.scripted import ScriptedModel, text, tool_call
from agentloom.testing.backend import FakeBackend
from tests.plugins.tenants import Tenant

pytestmark = pytest.mark.both_databases  # what these check is stored

HELLO = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "you"}]},
]


async def test_a_stored_completion_reads_back_as_it_was_answered(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello there!")

    answer = await client.chat.completions.create(
        model=backend.model, messages=HELLO, store=True, metadata={"topic": "greeting"}
    )
    kept = await client.chat.completions.retrieve(answer.id)
    messages = await client.chat.completions.messages.list(answer.id)

    assert answer.id.startswith("chatcmpl-")
    assert kept.id == answer.id
    assert kept.choices[0].message.content == "Hello there!"
    assert kept.usage == answer.usage
    assert kept.metadata == {"topic": "greeting"}
    assert [m.id for m in messages.data] == [f"{answer.id}-0", f"{answer.id}-1"]
    assert messages.data[0].content == "Be brief."
    assert messages.data[0].content_parts is None
    assert messages.data[1].content == "Hi you"
    assert [p.text for p in messages.data[1].content_parts or []] == ["Hi ", "you"]
    sent = backend.requests[-1]
    assert "store" not in sent  # agentloom keeps it, the backend is not asked to
    assert "metadata" not in sent


async def test_a_streamed_completion_is_stored_whole(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        [*text("It is ", chunk_size=3), *text("sunny."), tool_call("get_weather", {"city": "Oslo"})]
    )

    stream = await client.chat.completions.create(
        model=backend.model,
        messages=[{"role": "user", "content": "Weather?"}],
        store=True,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    kept = await client.chat.completions.retrieve(chunks[0].id)

    assert {chunk.id for chunk in chunks} == {kept.id}  # every chunk under the stored id
    message = kept.choices[0].message
    assert message.content == "It is sunny."
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.name == "get_weather"
    assert message.tool_calls[0].function.arguments == '{"city": "Oslo"}'
    assert kept.choices[0].finish_reason == "tool_calls"
    assert kept.usage is not None
    assert kept.usage == chunks[-1].usage


async def test_list_filters_pages_updates_and_deletes(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    ids = []
    for n in range(5):
        scripted.add_turn(f"Answer {n}")
        answer = await client.chat.completions.create(
            model=backend.model,
            messages=[{"role": "user", "content": f"Question {n}"}],
            store=True,
            metadata={"parity": "even" if n % 2 == 0 else "odd"},
        )
        ids.append(answer.id)
    scripted.add_turn("Not kept")
    await client.chat.completions.create(model=backend.model, messages=HELLO)

    listed = [c.id async for c in client.chat.completions.list(limit=2)]
    newest = await client.chat.completions.list(order="desc", limit=2)
    even = await client.chat.completions.list(metadata={"parity": "even"})
    other = await client.chat.completions.list(model="some-other-model")
    updated = await client.chat.completions.update(ids[1], metadata={"parity": "changed"})
    odd = await client.chat.completions.list(metadata={"parity": "odd"})
    deleted = await client.chat.completions.delete(ids[0])
    after = [c.id async for c in client.chat.completions.list()]

    assert listed == ids  # oldest first, every page (the unstored one is not listed)
    assert [c.id for c in newest.data] == [ids[4], ids[3]]
    assert newest.has_more
    assert [c.id for c in even.data] == [ids[0], ids[2], ids[4]]
    assert other.data == []
    assert updated.metadata == {"parity": "changed"}
    assert [c.id for c in odd.data] == [ids[3]]
    assert deleted.deleted
    assert deleted.object == "chat.completion.deleted"
    assert after == ids[1:]
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.retrieve(ids[0])


async def test_bad_requests_are_clear(
    client: openai.AsyncOpenAI, http: httpx2.AsyncClient, backend: FakeBackend
) -> None:
    too_many = {f"k{n}": "v" for n in range(17)}
    with pytest.raises(openai.BadRequestError) as metadata:
        await client.chat.completions.create(
            model=backend.model, messages=HELLO, store=True, metadata=too_many
        )
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.update("chatcmpl-nope", metadata={})
    with pytest.raises(openai.NotFoundError):
        await client.chat.completions.messages.list("chatcmpl-nope")
    missing = await http.post("/chat/completions/chatcmpl-nope", json={})

    assert metadata.value.param is not None
    assert metadata.value.param.startswith("metadata")
    assert missing.status_code == 400  # metadata is required (null clears it)
    assert missing.json()["error"]["param"] == "metadata"


async def test_another_projects_completions_are_not_found(
    alpha: Tenant, beta: Tenant, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Mine")
    mine = await alpha.client.chat.completions.create(
        model=backend.model, messages=HELLO, store=True
    )

    theirs = await beta.client.chat.completions.list()
    with pytest.raises(openai.NotFoundError):
        await beta.client.chat.completions.retrieve(mine.id)
    with pytest.raises(openai.NotFoundError):
        await beta.client.chat.completions.delete(mine.id)
    with pytest.raises(openai.NotFoundError):
        await beta.client.chat.completions.messages.list(mine.id)
    ours = await alpha.client.chat.completions.list()

    assert theirs.data == []
    assert [c.id for c in ours.data] == [mine.id]
