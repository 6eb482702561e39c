"""Stored responses read back: retrieve, delete, input items, the list, ``store: false`` and
``previous_response_id`` chains.

Pagination is checked page by page: ``first_id``/``last_id`` name the page's ends, ``has_more``
says whether anything is left, and walking the pages neither skips nor repeats an object.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentloom.inference.scripted import ScriptedModel, delay, reasoning, text, tool_call
from agentloom.testing.backend import FakeBackend

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

WEATHER_TOOL: Any = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": False,
}


def user_messages(count: int) -> list[Any]:
    return [{"role": "user", "content": f"m{i}"} for i in range(count)]


def texts_of(items: list[Any]) -> list[str]:
    """The text of each message item's first content part."""
    return [item.content[0].text for item in items]


def sent_messages(backend: FakeBackend) -> list[tuple[str, str]]:
    """(role, content) of every message of the last chat request the backend received."""
    messages: Any = backend.last_request["messages"]
    return [(m["role"], m["content"]) for m in messages]


async def get_json(http: httpx2.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    reply = await http.get(path, params=params)
    assert reply.status_code == 200, reply.text
    page: dict[str, Any] = reply.json()
    return page


def check_page(page: dict[str, Any], *, expected: list[str], has_more: bool) -> None:
    """One list page: exactly ``expected`` (ids), its ends named, ``has_more`` as given."""
    ids = [entry["id"] for entry in page["data"]]
    assert page["object"] == "list"
    assert ids == expected
    assert page["first_id"] == (ids[0] if ids else None)
    assert page["last_id"] == (ids[-1] if ids else None)
    assert page["has_more"] is has_more


# --- retrieve ----------------------------------------------------------------------------------


async def test_retrieve_returns_the_response_as_created(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn(
        reasoning("The user wants weather."),
        text("Let me check.", chunk_size=4),
        tool_call("get_weather", {"city": "Paris"}, call_id="call_1"),
    )
    created = await client.responses.create(
        model=backend.model,
        input="Weather in Paris?",
        tools=[WEATHER_TOOL],
        instructions="Be brief.",
        metadata={"topic": "weather"},
        temperature=0.5,
    )

    retrieved = await client.responses.retrieve(created.id)

    assert [item.type for item in created.output] == ["reasoning", "message", "function_call"]
    assert retrieved.model_dump() == created.model_dump()


async def test_retrieve_with_include_returns_the_same_response(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("Hello")
    created = await client.responses.create(model=backend.model, input="Hi")

    retrieved = await client.responses.retrieve(
        created.id, include=["message.output_text.logprobs", "reasoning.encrypted_content"]
    )

    assert retrieved.model_dump() == created.model_dump()
    assert retrieved.output_text == "Hello"


async def test_a_running_response_is_stored_in_progress(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(delay(1.0), "done")
    task = asyncio.create_task(client.responses.create(model=backend.model, input="slow"))
    try:
        for _ in range(40):  # the model answers after 1 s; the row is written after 0.05 s
            listed = (await get_json(http, "/responses"))["data"]
            if listed:
                break
            await asyncio.sleep(0.02)
        running = await client.responses.retrieve(listed[0]["id"])
        assert not task.done()
    finally:
        finished = await task

    assert running.id == finished.id
    assert running.status == "in_progress"
    assert running.output == []
    assert finished.status == "completed"
    assert (await client.responses.retrieve(finished.id)).model_dump() == finished.model_dump()


# --- delete ------------------------------------------------------------------------------------


async def test_delete_answers_the_deleted_object_then_everything_is_404(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    doomed = await client.responses.create(model=backend.model, input="forget me")
    kept = await client.responses.create(model=backend.model, input="keep me")
    doomed_inputs = await client.responses.input_items.list(doomed.id)

    reply = await http.delete(f"/responses/{doomed.id}")

    assert reply.status_code == 200
    assert reply.json() == {"id": doomed.id, "object": "response.deleted", "deleted": True}
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(doomed.id)
    with pytest.raises(openai.NotFoundError):
        await client.responses.input_items.list(doomed.id)
    with pytest.raises(openai.NotFoundError):
        await client.responses.delete(doomed.id)
    with pytest.raises(openai.NotFoundError) as caught:  # its items went with it
        await client.responses.create(
            model=backend.model,
            input=[{"type": "item_reference", "id": doomed_inputs.data[0].id}],
        )
    assert caught.value.param == "input[0].id"
    listed = await get_json(http, "/responses")
    assert [r["id"] for r in listed["data"]] == [kept.id]
    assert (await client.responses.retrieve(kept.id)).output_text == "keep me"


async def test_delete_through_the_sdk(client: openai.AsyncOpenAI, backend: FakeBackend) -> None:
    created = await client.responses.create(model=backend.model, input="x")

    await client.responses.delete(created.id)

    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.retrieve(created.id)
    assert caught.value.param == "response_id"


# --- input items -------------------------------------------------------------------------------


async def walk_input_items(
    http: httpx2.AsyncClient, response_id: str, total: int, **params: Any
) -> list[str]:
    """Every input item id, page after page with ``after``; each page checked."""
    limit: int = params.get("limit", 20)
    seen: list[str] = []
    after: str | None = None
    while True:
        query = {**params, **({"after": after} if after else {})}
        page = await get_json(http, f"/responses/{response_id}/input_items", **query)
        ids = [item["id"] for item in page["data"]]
        expected_size = min(limit, total - len(seen))
        assert len(ids) == expected_size
        seen += ids
        check_page(page, expected=ids, has_more=len(seen) < total)
        if not page["has_more"]:
            return seen
        after = page["last_id"]


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("limit", [1, 2, 3, 6, 7, 100])
async def test_input_items_pages_neither_skip_nor_repeat(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    order: str,
    limit: int,
) -> None:
    created = await client.responses.create(model=backend.model, input=user_messages(7))
    everything = await client.responses.input_items.list(created.id, order="asc")
    ascending = [item.id for item in everything.data]
    assert texts_of(everything.data) == [f"m{i}" for i in range(7)]

    walked = await walk_input_items(http, created.id, 7, limit=limit, order=order)

    assert walked == (ascending if order == "asc" else ascending[::-1])


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("limit", [1, 2, 3, 100])
async def test_input_items_page_backwards_with_before(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    order: str,
    limit: int,
) -> None:
    created = await client.responses.create(model=backend.model, input=user_messages(7))
    listed = await get_json(http, f"/responses/{created.id}/input_items", order=order)
    ids = [item["id"] for item in listed["data"]]  # in ``order``

    # Start from the last item and walk towards the first: each page is the ``limit`` items
    # just before the cursor, still in ``order``; ``has_more`` says whether more lie beyond.
    collected: list[str] = []
    before = ids[-1]
    while True:
        path = f"/responses/{created.id}/input_items"
        page = await get_json(http, path, order=order, limit=limit, before=before)
        remaining = len(ids) - 1 - len(collected)
        expected = ids[remaining - min(limit, remaining) : remaining]
        check_page(page, expected=expected, has_more=remaining > limit)
        collected = expected + collected
        if not page["has_more"]:
            break
        before = page["first_id"]

    assert collected == ids[:-1]


async def test_input_items_between_after_and_before(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await client.responses.create(model=backend.model, input=user_messages(8))
    ids = [item.id for item in (await client.responses.input_items.list(created.id)).data]
    path = f"/responses/{created.id}/input_items"  # ids: newest first (desc is the default)

    window = await get_json(http, path, after=ids[1], before=ids[6])
    first_two = await get_json(http, path, after=ids[1], before=ids[6], limit=2)

    check_page(window, expected=ids[2:6], has_more=False)
    check_page(first_two, expected=ids[2:4], has_more=True)


async def test_input_items_defaults_and_the_largest_page(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await client.responses.create(model=backend.model, input=user_messages(120))
    path = f"/responses/{created.id}/input_items"

    default = await get_json(http, path)
    largest = await get_json(http, path, limit=100, order="asc")
    rest = await get_json(http, path, limit=100, order="asc", after=largest["last_id"])

    texts = [item["content"][0]["text"] for item in default["data"]]
    assert texts == [f"m{i}" for i in range(119, 99, -1)]  # 20, newest first
    assert default["has_more"] is True
    assert len(largest["data"]) == 100
    assert largest["has_more"] is True
    assert [item["content"][0]["text"] for item in rest["data"]] == [
        f"m{i}" for i in range(100, 120)
    ]
    assert rest["has_more"] is False


async def test_the_sdk_auto_paginates_input_items(
    client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await client.responses.create(model=backend.model, input=user_messages(9))

    items = [item async for item in client.responses.input_items.list(created.id, limit=2)]

    assert texts_of(items) == [f"m{i}" for i in range(8, -1, -1)]


async def test_input_items_are_the_items_as_sent_with_ids(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    scripted.add_turn("It is sunny.")
    items: Any = [
        {"type": "message", "id": "msg_mine", "role": "user", "content": "Weather?"},
        {
            "type": "function_call",
            "call_id": "call_7",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
        },
        {"type": "function_call_output", "call_id": "call_7", "output": "sunny"},
    ]
    created = await client.responses.create(
        model=backend.model,
        input=items,
        tools=[WEATHER_TOOL],
    )

    page = await client.responses.input_items.list(created.id, order="asc")

    message, call, output = page.data
    assert message.type == "message"
    assert message.id == "msg_mine"
    assert message.role == "user"
    assert message.content[0].type == "input_text"
    assert message.content[0].text == "Weather?"
    assert call.type == "function_call"
    assert (call.call_id, call.name, call.arguments) == (
        "call_7",
        "get_weather",
        '{"city": "Oslo"}',
    )
    assert output.type == "function_call_output"
    assert (output.call_id, output.output) == ("call_7", "sunny")
    ids = [message.id, call.id, output.id]
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == 3
    assert page.has_more is False


# --- the list of responses ---------------------------------------------------------------------


async def walk_responses(http: httpx2.AsyncClient, total: int, **params: Any) -> list[str]:
    """Every response id of ``GET /v1/responses``, page after page; each page checked."""
    limit: int = params.get("limit", 20)
    seen: list[str] = []
    after: str | None = None
    while True:
        query = {**params, **({"after": after} if after else {})}
        page = await get_json(http, "/responses", **query)
        ids = [entry["id"] for entry in page["data"]]
        assert len(ids) == min(limit, total - len(seen))
        assert not set(ids) & set(seen)
        seen += ids
        check_page(page, expected=ids, has_more=len(seen) < total)
        if not page["has_more"]:
            return seen
        after = page["last_id"]


async def test_list_pages_over_responses_created_in_the_same_instant(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = await asyncio.gather(
        *(client.responses.create(model=backend.model, input=f"r{i}") for i in range(30))
    )
    assert len({r.created_at for r in created}) <= 2  # timestamps cannot order them
    every_id = {r.id for r in created}

    for limit in (1, 4, 7, 29, 30, 100):
        newest_first = await walk_responses(http, 30, limit=limit)
        oldest_first = await walk_responses(http, 30, limit=limit, order="asc")
        assert set(newest_first) == every_id
        assert oldest_first == newest_first[::-1]


async def test_list_is_in_creation_order_newest_first_by_default(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    created = [
        (await client.responses.create(model=backend.model, input=f"r{i}")).id for i in range(25)
    ]

    default = await get_json(http, "/responses")
    ascending = await walk_responses(http, 25, order="asc", limit=10)

    check_page(default, expected=created[::-1][:20], has_more=True)
    assert ascending == created


async def test_list_filters_by_model_across_pages(
    http: httpx2.AsyncClient, client: openai.AsyncOpenAI, backend: FakeBackend
) -> None:
    alias = f"fake/{backend.model}"  # the same backend model, served under its provider's name
    by_model: dict[str, list[str]] = {backend.model: [], alias: []}
    for i in range(12):
        model = alias if i % 3 == 0 else backend.model
        by_model[model].append((await client.responses.create(model=model, input=f"r{i}")).id)

    plain = await walk_responses(http, 8, model=backend.model, limit=3, order="asc")
    aliased = await walk_responses(http, 4, model=alias, limit=3)
    nothing = await get_json(http, "/responses", model="no-such-model")

    assert plain == by_model[backend.model]
    assert aliased == by_model[alias][::-1]
    check_page(nothing, expected=[], has_more=False)


async def test_listed_responses_are_the_stored_responses(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turn(reasoning("Hmm."), "Answer one.")
    scripted.add_turn("Answer two.")
    first = await client.responses.create(model=backend.model, input="one")
    second = await client.responses.create(model=backend.model, input="two", metadata={"n": "2"})

    listed = await get_json(http, "/responses", order="asc")

    expected = [
        (await http.get(f"/responses/{first.id}")).json(),
        (await http.get(f"/responses/{second.id}")).json(),
    ]
    assert listed["data"] == expected
    assert [r["output"][-1]["content"][0]["text"] for r in listed["data"]] == [
        "Answer one.",
        "Answer two.",
    ]


# --- store: false ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_store_false_writes_nothing(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    stream: bool,
) -> None:
    scripted.add_turn("Not kept.")
    if stream:
        events = await client.responses.create(
            model=backend.model, input="Hi", store=False, stream=True
        )
        terminal = [event async for event in events][-1]
        assert terminal.type == "response.completed"
        response = terminal.response
    else:
        response = await client.responses.create(model=backend.model, input="Hi", store=False)

    assert response.to_dict()["store"] is False
    assert response.output_text == "Not kept."
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(response.id)
    with pytest.raises(openai.NotFoundError):
        await client.responses.input_items.list(response.id)
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(
            model=backend.model, input="And then?", previous_response_id=response.id
        )
    assert caught.value.code == "previous_response_not_found"
    assert caught.value.param == "previous_response_id"
    assert len(backend.requests) == 1  # the continuation never reached the model
    check_page(await get_json(http, "/responses"), expected=[], has_more=False)


async def test_store_false_can_continue_a_stored_chain_without_joining_it(
    http: httpx2.AsyncClient,
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
) -> None:
    scripted.add_turns("Stored answer.", "Ephemeral answer.", "Second branch.")
    stored = await client.responses.create(model=backend.model, input="Keep this")
    ephemeral = await client.responses.create(
        model=backend.model, input="Peek", previous_response_id=stored.id, store=False
    )
    assert [content for _, content in sent_messages(backend)] == [
        "Keep this",
        "Stored answer.",
        "Peek",
    ]

    await client.responses.create(
        model=backend.model, input="Branch", previous_response_id=stored.id
    )

    assert ephemeral.previous_response_id == stored.id
    assert sent_messages(backend) == [  # the peek left no trace
        ("user", "Keep this"),
        ("assistant", "Stored answer."),
        ("user", "Branch"),
    ]
    assert len((await get_json(http, "/responses"))["data"]) == 2


# --- previous_response_id chains ---------------------------------------------------------------


async def forget_cached_chains(client: openai.AsyncOpenAI) -> None:
    """Any delete clears the in-process cache of chains: the next one is read from the database."""
    with pytest.raises(openai.NotFoundError):
        await client.responses.delete("resp_does_not_exist")


@pytest.mark.parametrize("source", ["cache", "database"])
async def test_a_fifty_turn_chain(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel, source: str
) -> None:
    scripted.add_turns(*[f"answer {turn}" for turn in range(50)])
    ids: list[str] = []
    for turn in range(50):
        if turn == 49 and source == "database":
            await forget_cached_chains(client)
        response = await client.responses.create(
            model=backend.model,
            input=f"question {turn}",
            previous_response_id=ids[-1] if ids else None,
        )
        assert response.output_text == f"answer {turn}"
        ids.append(response.id)

    expected: list[tuple[str, str]] = []
    for turn in range(50):
        expected += [("user", f"question {turn}"), ("assistant", f"answer {turn}")]
    assert sent_messages(backend) == expected[:-1]  # the whole history, then turn 50's input
    # input_items lists the input of that response alone, not the history it continued
    last = await client.responses.input_items.list(ids[-1], limit=100)
    assert texts_of(last.data) == ["question 49"]
    assert last.has_more is False
    retrieved = await client.responses.retrieve(ids[-1])
    assert retrieved.previous_response_id == ids[-2]


async def test_deleting_a_response_in_the_middle_of_a_chain(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    """What is asserted: deleting turn 2 of turns 0-4 removes turn 2 only. Turns 3 and 4 stay
    retrievable and keep ``previous_response_id`` pointing at the deleted id; continuing from
    turn 2 is ``previous_response_not_found``; continuing from turn 4 works, with the history
    that is still reachable from it: turns 3 and 4 (the chain is cut where turn 2 was, so turns
    0 and 1 are no longer part of it)."""
    scripted.add_turns(*[f"a{turn}" for turn in range(5)], "a5")
    ids: list[str] = []
    for turn in range(5):
        response = await client.responses.create(
            model=backend.model, input=f"q{turn}", previous_response_id=ids[-1] if ids else None
        )
        ids.append(response.id)

    await client.responses.delete(ids[2])

    after_gap = await client.responses.retrieve(ids[3])
    assert after_gap.previous_response_id == ids[2]
    assert texts_of((await client.responses.input_items.list(ids[3])).data) == ["q3"]
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(
            model=backend.model, input="from the deleted one", previous_response_id=ids[2]
        )
    assert caught.value.code == "previous_response_not_found"
    calls_before = len(backend.requests)

    continued = await client.responses.create(
        model=backend.model, input="q5", previous_response_id=ids[4]
    )

    assert continued.status == "completed"
    assert continued.output_text == "a5"
    assert len(backend.requests) == calls_before + 1
    assert sent_messages(backend) == [
        ("user", "q3"),
        ("assistant", "a3"),
        ("user", "q4"),
        ("assistant", "a4"),
        ("user", "q5"),
    ]
    assert (await client.responses.retrieve(ids[1])).output_text == "a1"  # the older part stays
