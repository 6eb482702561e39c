"""The chain history: read from storage once, then served parsed from the cache."""

from __future__ import annotations

import json

import pytest

from agentloom.api.items import Message
from agentloom.engine.compaction import Compactions
from agentloom.engine.context import Context, History
from agentloom.errors import NotFoundError
from agentloom.sealing import Sealer, SealingKey
from agentloom.storage.base import ItemRow, ResponseRow
from agentloom.storage.database import Database

READER = Compactions(Sealer([SealingKey.new()])).read


def _row(rid: str, previous: str | None = None) -> ResponseRow:
    return ResponseRow(
        id=rid,
        created_at=1.0,
        model="m",
        status="completed",
        previous_response_id=previous,
        body=json.dumps({"id": rid}),
    )


def _message(mid: str, text: str) -> ItemRow:
    body = {"type": "message", "id": mid, "role": "user", "content": text, "status": "completed"}
    return ItemRow(id=mid, body=json.dumps(body))


async def test_loads_the_chain_from_storage(database: Database) -> None:
    store = database.responses
    await store.save(_row("resp_1"), [_message("msg_1", "one")], [])
    await store.save(_row("resp_2", "resp_1"), [_message("msg_2", "two")], [])
    items = (await History(store, READER).load("resp_2")).items
    assert [i.id for i in items] == ["msg_1", "msg_2"]
    assert (await History(store, READER).load(None)).items == ()


async def test_unknown_response_is_previous_response_not_found(database: Database) -> None:
    with pytest.raises(NotFoundError) as info:
        await History(database.responses, READER).load("resp_missing")
    assert info.value.code == "previous_response_not_found"
    assert info.value.param == "previous_response_id"


async def test_remembered_chain_is_served_until_deleted(database: Database) -> None:
    store = database.responses
    await store.save(_row("resp_1"), [_message("msg_1", "stored")], [])
    history = History(store, READER)
    cached = Message.model_validate({"id": "msg_c", "role": "user", "content": "cached"})
    history.remember("resp_1", Context.of([cached], READER))
    assert [i.id for i in (await history.load("resp_1")).items] == ["msg_c"]  # no storage read
    await store.delete("resp_1")
    with pytest.raises(NotFoundError):
        await history.load("resp_1")  # the existence check sees the delete


async def test_cache_is_bounded(database: Database) -> None:
    store = database.responses
    history = History(store, READER, cache_size=2)
    for n in range(3):
        await store.save(_row(f"resp_{n}"), [_message(f"msg_{n}", "stored")], [])
        history.remember(f"resp_{n}", Context())
    assert (await history.load("resp_2")).items == ()  # cached: empty
    assert [i.id for i in (await history.load("resp_0")).items] == ["msg_0"]  # evicted: storage
