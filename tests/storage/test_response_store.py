"""The response store contract, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import json
import subprocess

import pytest
import sqlalchemy as sa

from agentloom.errors import NotFoundError
from agentloom.storage import schema
from agentloom.storage.base import ItemRow, ResponseQuery, ResponseRow
from agentloom.storage.database import Database, DatabaseURLError, driver_url
from agentloom.storage.runner import scalar_count


def _response(
    rid: str,
    *,
    previous: str | None = None,
    model: str = "m",
    created_at: float = 1700000000.0,  # every row in the same second: order must come from the key
    metadata: dict[str, str] | None = None,
) -> ResponseRow:
    body = json.dumps({"id": rid, "status": "in_progress", "model": model, "metadata": metadata})
    return ResponseRow(
        id=rid,
        created_at=created_at,
        model=model,
        status="in_progress",
        previous_response_id=previous,
        body=body,
    )


def _items(*ids: str) -> list[ItemRow]:
    return [ItemRow(id=i, body=json.dumps({"id": i})) for i in ids]


def _done(row: ResponseRow) -> ResponseRow:
    return ResponseRow(
        id=row.id,
        created_at=row.created_at,
        model=row.model,
        status="completed",
        previous_response_id=row.previous_response_id,
        body=row.body.replace("in_progress", "completed"),
    )


async def _count(db: Database, table: sa.Table) -> int:
    return await db.runner.read(scalar_count(table))


async def test_begin_finish_get_roundtrip(database: Database) -> None:
    store = database.responses
    row = _response("resp_1")
    await store.begin(row, _items("msg_in"))
    await store.finish(_done(row), _items("msg_out1", "fc_out2"))
    stored = await store.get("resp_1")
    assert stored is not None
    assert stored.response.status == "completed"
    assert [i.id for i in stored.output] == ["msg_out1", "fc_out2"]
    assert await store.get("resp_missing") is None


async def test_delete_removes_response_and_items(database: Database) -> None:
    store = database.responses
    await store.begin(_response("resp_1"), _items("a", "b"))
    assert await store.delete("resp_1") is True
    assert await store.get("resp_1") is None
    assert await store.delete("resp_1") is False
    assert await _count(database, schema.items) == 0


@pytest.mark.parametrize("order", ["asc", "desc"])
async def test_list_pages_without_gaps_or_repeats(database: Database, order: str) -> None:
    store = database.responses
    ids = [f"resp_{n:03d}" for n in range(53)]
    for rid in ids:
        await store.begin(_response(rid, model="a" if int(rid[-3:]) % 2 else "b"), [])
    seen: list[str] = []
    after: str | None = None
    while True:
        page = await store.list_page(ResponseQuery(after=after, limit=10, order=order))  # type: ignore[arg-type]
        seen += [r.id for r in page.data]
        if not page.has_more:
            break
        after = page.data[-1].id
    assert seen == (ids if order == "asc" else ids[::-1])


async def test_list_filters_by_model(database: Database) -> None:
    store = database.responses
    for n in range(6):
        await store.begin(_response(f"resp_{n}", model="odd" if n % 2 else "even"), [])
    page = await store.list_page(ResponseQuery(limit=100, order="asc", model="odd"))
    assert [r.id for r in page.data] == ["resp_1", "resp_3", "resp_5"]
    assert page.has_more is False


async def test_list_filters_by_status_and_time(database: Database) -> None:
    store = database.responses
    for n in range(6):
        row = _response(f"resp_{n}", created_at=1700000000.0 + 10 * n)
        await store.begin(row, [])
        if n % 2:
            await store.finish(_done(row), [])

    async def ids(**filters: object) -> list[str]:
        page = await store.list_page(ResponseQuery(limit=100, order="asc", **filters))  # type: ignore[arg-type]
        return [r.id for r in page.data]

    assert await ids(status="completed") == ["resp_1", "resp_3", "resp_5"]
    assert await ids(status="in_progress") == ["resp_0", "resp_2", "resp_4"]
    assert await ids(status="failed") == []
    # created_after is inclusive, created_before exclusive
    assert await ids(created_after=1700000020) == ["resp_2", "resp_3", "resp_4", "resp_5"]
    assert await ids(created_before=1700000020) == ["resp_0", "resp_1"]
    window = {"created_after": 1700000010, "created_before": 1700000040}
    assert await ids(**window) == ["resp_1", "resp_2", "resp_3"]
    assert await ids(**window, status="completed") == ["resp_1", "resp_3"]


async def test_list_filters_by_metadata_pairs(database: Database) -> None:
    store = database.responses
    tags = [
        {"team": "a", "run": "1"},
        {"team": "b", "run": "1"},
        {"team": "a", "run": "2"},
        None,
        {"team": "a", "run": "1", 'odd.key "$[0]': "it's"},
        {"Team": "a"},
    ]
    for n, metadata in enumerate(tags):
        await store.begin(_response(f"resp_{n}", metadata=metadata), [])

    async def ids(*pairs: tuple[str, str], after: str | None = None, limit: int = 100) -> list[str]:
        query = ResponseQuery(after=after, limit=limit, order="asc", metadata=pairs)
        return [r.id for r in (await store.list_page(query)).data]

    assert await ids(("team", "a")) == ["resp_0", "resp_2", "resp_4"]
    assert await ids(("team", "a"), ("run", "1")) == ["resp_0", "resp_4"]
    assert await ids(("team", "A")) == []  # values compare exactly
    assert await ids(('odd.key "$[0]', "it's")) == ["resp_4"]  # a key is never a path
    assert await ids(("team", "a"), limit=2) == ["resp_0", "resp_2"]
    assert await ids(("team", "a"), after="resp_2") == ["resp_4"]  # pages walk the matches


async def test_list_after_unknown_id_is_not_found(database: Database) -> None:
    with pytest.raises(NotFoundError) as info:
        await database.responses.list_page(ResponseQuery(after="resp_nope", limit=5))
    assert info.value.param == "after"


async def test_input_items_pagination(database: Database) -> None:
    store = database.responses
    ids = [f"item_{n}" for n in range(7)]
    await store.begin(_response("resp_1"), _items(*ids))
    await store.finish(_done(_response("resp_1")), _items("out_1"))
    page = await store.input_items("resp_1", after=None, before=None, limit=3, order="asc")
    assert page is not None
    assert [i.id for i in page.data] == ids[:3]
    assert page.has_more
    page = await store.input_items("resp_1", after="item_2", before=None, limit=3, order="asc")
    assert page is not None
    assert [i.id for i in page.data] == ids[3:6]
    page = await store.input_items("resp_1", after=None, before=None, limit=100, order="desc")
    assert page is not None
    assert [i.id for i in page.data] == ids[::-1]
    assert not page.has_more
    page = await store.input_items(
        "resp_1", after="item_5", before="item_1", limit=100, order="desc"
    )
    assert page is not None
    assert [i.id for i in page.data] == ["item_4", "item_3", "item_2"]
    assert await store.input_items("nope", after=None, before=None, limit=3, order="asc") is None


async def test_history_walks_the_chain_and_stores_items_once(database: Database) -> None:
    store = database.responses
    previous: str | None = None
    for turn in range(30):
        rid = f"resp_{turn:02d}"
        row = _response(rid, previous=previous)
        await store.begin(row, _items(f"in_{turn:02d}"))
        await store.finish(_done(row), _items(f"out_{turn:02d}"))
        previous = rid
    history = await store.history("resp_29")
    assert history is not None
    expected = [f"{kind}_{t:02d}" for t in range(30) for kind in ("in", "out")]
    assert [i.id for i in history] == expected
    assert await _count(database, schema.items) == 60  # 2 per turn, never the whole history
    assert await store.history("resp_missing") is None
    await store.begin(_response("resp_empty"), [])
    assert await store.history("resp_empty") == []


async def test_find_item_returns_latest(database: Database) -> None:
    store = database.responses
    await store.begin(_response("resp_1"), [ItemRow(id="msg_x", body='{"v": 1}')])
    await store.begin(_response("resp_2"), [ItemRow(id="msg_x", body='{"v": 2}')])
    found = await store.find_item("msg_x")
    assert found is not None
    assert json.loads(found.body) == {"v": 2}
    assert await store.find_item("msg_none") is None


async def test_abandoned_responses_are_failed(database_url: str) -> None:
    crashed = await Database.connect(database_url, instance_id="inst_crashed")
    await crashed.migrate()
    await crashed.responses.begin(_response("resp_left"), [])
    await crashed.runner.aclose()  # a crash: no aclose, the heartbeat row stays
    alive = await Database.connect(database_url, instance_id="inst_alive")
    try:
        await alive.migrate()  # a second migrate is a no-op
        await alive.heartbeat()
        await alive.responses.begin(_response("resp_mine"), [])
        assert await alive.fail_abandoned(after=60) == 1  # never heartbeat: abandoned
        left = await alive.responses.get("resp_left")
        assert left is not None
        assert left.response.status == "failed"
        assert json.loads(left.response.body)["error"]["code"] == "server_error"
        mine = await alive.responses.get("resp_mine")
        assert mine is not None
        assert mine.response.status == "in_progress"
    finally:
        await alive.aclose()


async def test_stale_heartbeat_counts_as_abandoned(database_url: str) -> None:
    old = await Database.connect(database_url, instance_id="inst_old")
    await old.migrate()
    await old.heartbeat()
    await old.responses.begin(_response("resp_old"), [])
    await old.runner.aclose()
    new = await Database.connect(database_url, instance_id="inst_new")
    try:
        assert await new.fail_abandoned(after=3600) == 0  # its heartbeat is still fresh
        assert await new.fail_abandoned(after=-1) == 1  # every heartbeat is too old
    finally:
        await new.aclose()


def test_url_mapping() -> None:
    assert driver_url("sqlite:///data/x.db").drivername == "sqlite+pysqlite"
    assert driver_url("postgresql://u@h:5432/d").drivername == "postgresql+asyncpg"
    with pytest.raises(DatabaseURLError):
        driver_url("mysql://u@h/d")


async def test_save_writes_a_finished_response_at_once(database: Database) -> None:
    store = database.responses
    await store.save(_done(_response("resp_1")), _items("in_1", "in_2"), _items("out_1"))
    stored = await store.get("resp_1")
    assert stored is not None
    assert stored.response.status == "completed"
    assert [i.id for i in stored.output] == ["out_1"]
    page = await store.input_items("resp_1", after=None, before=None, limit=10, order="asc")
    assert page is not None
    assert [i.id for i in page.data] == ["in_1", "in_2"]
    history = await store.history("resp_1")
    assert history is not None
    assert [i.id for i in history] == ["in_1", "in_2", "out_1"]
    assert await store.exists("resp_1")
    assert not await store.exists("resp_2")


async def test_dead_local_process_is_recovered_at_once(database_url: str) -> None:
    crashed = await Database.connect(database_url, instance_id="inst_crashed")
    await crashed.migrate()
    await crashed.heartbeat()
    await crashed.responses.begin(_response("resp_left"), [])
    dead_pid = _exited_pid()
    await crashed.runner.write(
        lambda conn: conn.execute(
            schema.instances.update()
            .where(schema.instances.c.id == "inst_crashed")
            .values(pid=dead_pid)
        )
    )
    await crashed.runner.aclose()  # a kill -9: the heartbeat row stays, fresh
    restarted = await Database.connect(database_url, instance_id="inst_restarted")
    try:
        assert await restarted.fail_abandoned(after=3600) == 1
        left = await restarted.responses.get("resp_left")
        assert left is not None
        assert left.response.status == "failed"
    finally:
        await restarted.aclose()


def _exited_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
