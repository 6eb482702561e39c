"""Stored responses read back: retrieve, delete, input items, the list, ``store: false``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentloom.inference.scripted import ScriptedModel
from agentloom.testing.backend import FakeBackend


async def test_retrieve_returns_what_create_returned(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello")
    created = await client.responses.create(
        model=backend.model, input="Hi", metadata={"k": "v"}, instructions="Be brief."
    )

    retrieved = await client.responses.retrieve(created.id)
    with_include = await client.responses.retrieve(
        created.id, include=["message.output_text.logprobs"]
    )

    assert retrieved.model_dump() == created.model_dump()
    assert with_include.model_dump() == created.model_dump()


async def test_unknown_include_on_retrieve_is_a_400(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await client.responses.create(model=backend.model, input="Hi")

    reply = await http.get(f"/responses/{created.id}", params={"include": "everything"})

    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "include"


async def test_delete_then_404(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello")
    created = await client.responses.create(model=backend.model, input="Hi")

    await client.responses.delete(created.id)

    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        await client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        await client.responses.input_items.list(created.id)


async def test_delete_answers_openais_deleted_object(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await client.responses.create(model=backend.model, input="Hi")

    reply = await http.delete(f"/responses/{created.id}")

    assert reply.json() == {"id": created.id, "object": "response.deleted", "deleted": True}


async def test_store_false_writes_nothing(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello")
    created = await client.responses.create(model=backend.model, input="Hi", store=False)

    assert created.store is False
    assert created.output_text == "Hello"
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(
            model=backend.model, input="again", previous_response_id=created.id
        )
    assert caught.value.code == "previous_response_not_found"


# --- input items -----------------------------------------------------------------------------


def _messages(count: int) -> list[Any]:
    return [{"role": "user", "content": f"m{i}"} for i in range(count)]


def _text(item: Any) -> str:
    return str(item.content[0].text)


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("limit", [1, 3, 7, 100])
async def test_input_items_pages_neither_skip_nor_repeat(
    client: openai.AsyncOpenAI, backend: FakeBackend, order: str, limit: int
) -> None:
    created = await client.responses.create(model=backend.model, input=_messages(7))
    expected = [f"m{i}" for i in range(7)]
    if order == "desc":
        expected.reverse()

    seen: list[str] = []
    after: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": limit, "order": order}
        if after is not None:
            kwargs["after"] = after
        page = await client.responses.input_items.list(created.id, **kwargs)
        texts = [_text(item) for item in page.data]
        seen += texts
        assert page.first_id == page.data[0].id
        assert page.last_id == page.data[-1].id
        assert page.has_more == (len(seen) < 7)
        if not page.has_more:
            break
        after = page.last_id

    assert seen == expected


async def test_input_items_before(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await client.responses.create(model=backend.model, input=_messages(5))
    everything = await client.responses.input_items.list(created.id, order="asc")
    ids = [item.id for item in everything.data]

    reply = await http.get(
        f"/responses/{created.id}/input_items",
        params={"order": "asc", "before": ids[3], "limit": 2},
    )

    page = reply.json()
    assert [item["id"] for item in page["data"]] == ids[1:3]  # the page just before the cursor
    assert page["has_more"] is True  # ids[0] is further back

    reply = await http.get(
        f"/responses/{created.id}/input_items",
        params={"order": "desc", "before": ids[3], "limit": 2},
    )
    assert [item["id"] for item in reply.json()["data"]] == [ids[4]]
    assert reply.json()["has_more"] is False


async def test_input_items_are_only_that_turns_input(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns("one", "two")
    first = await client.responses.create(model=backend.model, input="first")
    second = await client.responses.create(
        model=backend.model, input="second", previous_response_id=first.id
    )

    page = await client.responses.input_items.list(second.id)

    assert [_text(item) for item in page.data] == ["second"]


# --- the list ------------------------------------------------------------------------------


async def _list_all(http: httpx2.AsyncClient, **params: Any) -> list[str]:
    ids: list[str] = []
    after: str | None = None
    while True:
        query = {**params, **({"after": after} if after else {})}
        reply = await http.get("/responses", params=query)
        assert reply.status_code == 200, reply.text
        page = reply.json()
        assert page["object"] == "list"
        ids += [r["id"] for r in page["data"]]
        if page["data"]:
            assert page["first_id"] == page["data"][0]["id"]
            assert page["last_id"] == page["data"][-1]["id"]
        if not page["has_more"]:
            return ids
        after = page["last_id"]


async def test_list_pages_over_many_responses_of_the_same_second(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await asyncio.gather(
        *(client.responses.create(model=backend.model, input=f"r{i}") for i in range(30))
    )
    all_ids = {r.id for r in created}

    for limit in (1, 7, 30, 100):
        newest_first = await _list_all(http, limit=limit)
        oldest_first = await _list_all(http, limit=limit, order="asc")
        assert len(newest_first) == len(set(newest_first)) == 30
        assert set(newest_first) == all_ids
        assert oldest_first == list(reversed(newest_first))


async def test_list_filters_by_model(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    await client.responses.create(model=backend.model, input="x")

    assert len(await _list_all(http, model=backend.model)) == 1
    assert await _list_all(http, model="another-model") == []


# --- long chains -----------------------------------------------------------------------------


async def test_a_fifty_turn_chain_reaches_the_backend_whole(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turns(*[f"answer {i}" for i in range(50)])
    previous: str | None = None
    for turn in range(50):
        response = await client.responses.create(
            model=backend.model, input=f"question {turn}", previous_response_id=previous
        )
        previous = response.id

    messages = backend.last_request["messages"]
    assert isinstance(messages, list)
    contents = [m["content"] for m in messages]  # type: ignore[index]
    expected: list[str] = []
    for turn in range(50):
        expected += [f"question {turn}", f"answer {turn}"]
    assert contents == expected[:-1]
