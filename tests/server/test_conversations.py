"""``/v1/conversations`` and its items, through the official ``openai`` client.

Every test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from typing import Any, cast

import httpx2
import openai
import pytest
from openai.types.conversations import Conversation, ConversationItemList
from openai.types.responses import ResponseInputItemParam

from tests.server.test_errors import the_error

pytestmark = pytest.mark.both_databases  # what these check depends on the storage


def user(text: str, **extra: Any) -> ResponseInputItemParam:
    return cast(
        "ResponseInputItemParam", {"type": "message", "role": "user", "content": text, **extra}
    )


def texts(items: list[Any]) -> list[str]:
    """The text of each message item, as the SDK parsed it."""
    return [item.content[0].text for item in items]


async def all_items(client: openai.AsyncOpenAI, conversation_id: str) -> list[Any]:
    return [item async for item in client.conversations.items.list(conversation_id, order="asc")]


# --- conversations -------------------------------------------------------------------------


async def test_create_retrieve_update_delete(client: openai.AsyncOpenAI) -> None:
    created = await client.conversations.create(metadata={"topic": "demo"})

    assert isinstance(created, Conversation)
    assert created.id.startswith("conv_")
    assert created.object == "conversation"
    assert created.metadata == {"topic": "demo"}
    assert created.created_at > 0

    fetched = await client.conversations.retrieve(created.id)
    assert fetched == created

    updated = await client.conversations.update(created.id, metadata={"topic": "changed"})
    assert updated.metadata == {"topic": "changed"}
    assert (await client.conversations.retrieve(created.id)).metadata == {"topic": "changed"}

    deleted = await client.conversations.delete(created.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (
        created.id,
        "conversation.deleted",
        True,
    )
    with pytest.raises(openai.NotFoundError):
        await client.conversations.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        await client.conversations.items.list(created.id)
    with pytest.raises(openai.NotFoundError):
        await client.conversations.delete(created.id)


async def test_create_without_a_body(http: httpx2.AsyncClient) -> None:
    reply = await http.post("/conversations")

    assert reply.status_code == 200, reply.text
    assert reply.json()["metadata"] == {}


async def test_create_with_items_keeps_them_in_order(client: openai.AsyncOpenAI) -> None:
    conversation = await client.conversations.create(
        items=[
            user("first"),
            {"type": "message", "role": "assistant", "content": "second"},
            {"type": "message", "role": "developer", "content": "third"},
        ]
    )

    items = await all_items(client, conversation.id)

    assert texts(items) == ["first", "second", "third"]
    assert [item.role for item in items] == ["user", "assistant", "developer"]
    assert all(item.id and item.status == "completed" for item in items)
    assert len({item.id for item in items}) == 3


async def test_delete_removes_the_items(client: openai.AsyncOpenAI) -> None:
    conversation = await client.conversations.create(items=[user("kept?", id="msg_gone_1")])

    await client.conversations.delete(conversation.id)

    # the id is free again: nothing of the deleted conversation is left
    other = await client.conversations.create(items=[user("again", id="msg_gone_1")])
    assert texts(await all_items(client, other.id)) == ["again"]


# --- items ---------------------------------------------------------------------------------


async def test_add_retrieve_and_delete_items(client: openai.AsyncOpenAI) -> None:
    conversation = await client.conversations.create()

    added = await client.conversations.items.create(
        conversation.id, items=[user("one"), user("two")]
    )

    assert isinstance(added, ConversationItemList)
    assert texts(added.data) == ["one", "two"]
    assert (added.first_id, added.last_id) == (added.data[0].id, added.data[1].id)
    assert added.has_more is False

    item = await client.conversations.items.retrieve(
        added.first_id, conversation_id=conversation.id
    )
    assert item.id == added.first_id
    assert item.content[0].text == "one"  # type: ignore[union-attr]

    after = await client.conversations.items.delete(added.first_id, conversation_id=conversation.id)
    assert after.id == conversation.id
    assert texts(await all_items(client, conversation.id)) == ["two"]
    with pytest.raises(openai.NotFoundError):
        await client.conversations.items.retrieve(added.first_id, conversation_id=conversation.id)
    with pytest.raises(openai.NotFoundError):
        await client.conversations.items.delete(added.first_id, conversation_id=conversation.id)


async def test_items_of_every_kind_round_trip(client: openai.AsyncOpenAI) -> None:
    conversation = await client.conversations.create()
    items = cast(
        "list[ResponseInputItemParam]",
        [
            user("weather?"),
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city": "Paris"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "thinking"}],
            },
            {"type": "message", "role": "assistant", "content": "It is sunny."},
        ],
    )

    await client.conversations.items.create(conversation.id, items=items)
    listed = await all_items(client, conversation.id)

    assert [item.type for item in listed] == [
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
    ]
    assert listed[1].name == "get_weather"
    assert listed[2].output == "sunny"
    assert listed[2].status == "completed"
    assert listed[3].summary[0].text == "thinking"


async def test_an_item_belongs_to_one_conversation(client: openai.AsyncOpenAI) -> None:
    first = await client.conversations.create(items=[user("mine", id="msg_owned")])
    second = await client.conversations.create()

    with pytest.raises(openai.BadRequestError) as caught:
        await client.conversations.items.create(second.id, items=[user("moved?", id="msg_owned")])

    error = caught.value.body
    assert isinstance(error, dict)
    assert (error["param"], error["code"]) == ("items[0].id", "duplicate_item")
    assert await all_items(client, second.id) == []
    assert texts(await all_items(client, first.id)) == ["mine"]
    # nor can it be read or deleted through the other conversation
    with pytest.raises(openai.NotFoundError):
        await client.conversations.items.retrieve("msg_owned", conversation_id=second.id)
    with pytest.raises(openai.NotFoundError):
        await client.conversations.items.delete("msg_owned", conversation_id=second.id)


async def test_duplicate_ids_in_one_call_add_nothing(client: openai.AsyncOpenAI) -> None:
    conversation = await client.conversations.create()

    with pytest.raises(openai.BadRequestError) as caught:
        await client.conversations.items.create(
            conversation.id, items=[user("a", id="msg_twice"), user("b", id="msg_twice")]
        )

    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == "items[1].id"
    assert await all_items(client, conversation.id) == []


async def test_item_reference_adds_a_copy(client: openai.AsyncOpenAI) -> None:
    first = await client.conversations.create(items=[user("original", id="msg_source")])
    second = await client.conversations.create()

    added = await client.conversations.items.create(
        second.id,
        items=cast(
            "list[ResponseInputItemParam]", [{"type": "item_reference", "id": "msg_source"}]
        ),
    )

    assert texts(added.data) == ["original"]
    assert added.first_id != "msg_source"
    assert [i.id for i in await all_items(client, first.id)] == ["msg_source"]


# --- pagination ----------------------------------------------------------------------------


async def test_empty_conversation_lists_nothing(http: httpx2.AsyncClient) -> None:
    conversation = (await http.post("/conversations", json={})).json()

    page = (await http.get(f"/conversations/{conversation['id']}/items")).json()

    assert page == {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }


@pytest.mark.parametrize("order", ["asc", "desc"])
async def test_pages_walk_every_item_once(http: httpx2.AsyncClient, order: str) -> None:
    conversation = (await http.post("/conversations", json={})).json()
    path = f"/conversations/{conversation['id']}/items"
    for batch in range(3):  # 20 items a call, all within the same millisecond or so
        items = [{"role": "user", "content": f"{batch * 20 + i}"} for i in range(20)]
        assert (await http.post(path, json={"items": items})).status_code == 200
    expected = [str(i) for i in range(60)]
    if order == "desc":
        expected.reverse()

    seen: list[str] = []
    after: str | None = None
    while True:
        params: dict[str, str | int] = {"limit": 7, "order": order}
        if after is not None:
            params["after"] = after
        page = (await http.get(path, params=params)).json()
        data = page["data"]
        assert page["first_id"] == data[0]["id"]
        assert page["last_id"] == data[-1]["id"]
        seen += [item["content"][0]["text"] for item in data]
        assert page["has_more"] == (len(seen) < 60)
        if not page["has_more"]:
            break
        after = page["last_id"]

    assert seen == expected


async def test_exactly_one_page(http: httpx2.AsyncClient) -> None:
    conversation = (await http.post("/conversations", json={})).json()
    path = f"/conversations/{conversation['id']}/items"
    await http.post(path, json={"items": [{"role": "user", "content": str(i)} for i in range(5)]})

    page = (await http.get(path, params={"limit": 5})).json()
    assert [item["content"][0]["text"] for item in page["data"]] == ["4", "3", "2", "1", "0"]
    assert page["has_more"] is False

    rest = (await http.get(path, params={"limit": 5, "after": page["last_id"]})).json()
    assert rest["data"] == []
    assert rest["has_more"] is False
    assert (rest["first_id"], rest["last_id"]) == (None, None)


async def test_sdk_iterates_every_page(client: openai.AsyncOpenAI) -> None:
    conversation = await client.conversations.create()
    for batch in range(2):
        await client.conversations.items.create(
            conversation.id, items=[user(f"{batch}-{i}") for i in range(20)]
        )

    listed = [
        item
        async for item in client.conversations.items.list(conversation.id, limit=3, order="asc")
    ]

    assert texts(listed) == [f"{b}-{i}" for b in range(2) for i in range(20)]


# --- errors --------------------------------------------------------------------------------

CONV = "conv_0123456789abcdef0123456789abcdef0123456789abcdef"
BAD_REQUESTS: list[tuple[str, str, str, Any, int, str | None, str | None]] = [
    # (what, method, path, json body, status, param, code)
    ("malformed id", "GET", "/conversations/bogus", None, 400, "conversation_id", "invalid_value"),
    ("unknown id", "GET", f"/conversations/{CONV}", None, 404, "conversation_id", None),
    (
        "update unknown",
        "POST",
        f"/conversations/{CONV}",
        {"metadata": {}},
        404,
        "conversation_id",
        None,
    ),
    (
        "delete malformed",
        "DELETE",
        "/conversations/x",
        None,
        400,
        "conversation_id",
        "invalid_value",
    ),
    (
        "items of unknown",
        "GET",
        f"/conversations/{CONV}/items",
        None,
        404,
        "conversation_id",
        None,
    ),
    (
        "add to unknown",
        "POST",
        f"/conversations/{CONV}/items",
        {"items": [{"role": "user", "content": "x"}]},
        404,
        "conversation_id",
        None,
    ),
    (
        "too many metadata pairs",
        "POST",
        "/conversations",
        {"metadata": {str(i): "v" for i in range(17)}},
        400,
        "metadata",
        "invalid_value",
    ),
    (
        "too many items at creation",
        "POST",
        "/conversations",
        {"items": [{"role": "user", "content": "x"}] * 21},
        400,
        "items",
        "array_above_max_length",
    ),
    (
        "update without metadata",
        "POST",
        f"/conversations/{CONV}",
        {},
        400,
        "metadata",
        "missing_required_parameter",
    ),
    (
        "unknown item type",
        "POST",
        "/conversations",
        {"items": [{"type": "no_such_item"}]},
        400,
        "items[0]",
        "invalid_value",
    ),
    (
        "item reference to nothing",
        "POST",
        "/conversations",
        {"items": [{"type": "item_reference", "id": "msg_missing"}]},
        404,
        "items[0].id",
        None,
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "payload", "status", "param", "code"),
    [case[1:] for case in BAD_REQUESTS],
    ids=[case[0] for case in BAD_REQUESTS],
)
async def test_errors(
    http: httpx2.AsyncClient,
    method: str,
    path: str,
    payload: Any,
    status: int,
    param: str | None,
    code: str | None,
) -> None:
    reply = await http.request(method, path, json=payload)

    error = the_error(reply, status)
    assert (error["param"], error["code"]) == (param, code)


async def test_item_batch_limits(client: openai.AsyncOpenAI, http: httpx2.AsyncClient) -> None:
    conversation = await client.conversations.create()
    path = f"/conversations/{conversation.id}/items"

    too_many = await http.post(path, json={"items": [{"role": "user", "content": "x"}] * 21})
    none = await http.post(path, json={"items": []})

    assert the_error(too_many, 400)["param"] == "items"
    assert the_error(none, 400)["param"] == "items"
    assert await all_items(client, conversation.id) == []


async def test_list_errors(client: openai.AsyncOpenAI, http: httpx2.AsyncClient) -> None:
    conversation = await client.conversations.create(items=[user("x")])
    path = f"/conversations/{conversation.id}/items"

    assert the_error(await http.get(path, params={"limit": 0}), 400)["param"] == "limit"
    assert the_error(await http.get(path, params={"limit": 101}), 400)["param"] == "limit"
    assert the_error(await http.get(path, params={"order": "up"}), 400)["param"] == "order"
    assert the_error(await http.get(path, params={"after": "msg_nope"}), 404)["param"] == "after"
    assert the_error(await http.get(path, params={"include": "nope"}), 400)["param"] == "include"
    ok = await http.get(path, params={"include": "message.output_text.logprobs"})
    assert ok.status_code == 200
