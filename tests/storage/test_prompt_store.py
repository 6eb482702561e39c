"""The prompt store, on SQLite and PostgreSQL alike: versions, the one default, and the race
that only the unique ``(id, version)`` constraint can settle."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.engine import make_url

from agentloom.storage.database import Database
from agentloom.storage.prompts_base import PromptRow

INSERT = (
    "INSERT INTO prompts (id, version, created_at, is_default, body)"
    " VALUES ('{pid}', {version}, 0, false, '{{}}')"
)


def _row(pid: str, version: int, *, is_default: bool = True) -> PromptRow:
    return PromptRow(pid, version, 1_700_000_000.0, is_default, '{"prompt": "p"}')


async def _defaults(database: Database, pid: str) -> list[int]:
    return [row.version for row in await database.prompts.versions(pid) if row.is_default]


@asynccontextmanager
async def _other_writer(database_url: str) -> AsyncIterator[Callable[[str], Awaitable[None]]]:
    """A writer outside this process's store (another server process): ``write(sql)`` runs in
    an open transaction, committed when the block ends. It takes none of the store's locks."""
    if database_url.startswith("sqlite"):
        raw = sqlite3.connect(make_url(database_url).database or "", isolation_level=None)
        raw.execute("BEGIN IMMEDIATE")

        async def write_sqlite(sql: str) -> None:
            raw.execute(sql)

        try:
            yield write_sqlite
        finally:
            raw.execute("COMMIT")
            raw.close()
        return
    dsn = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    conn = await asyncpg.connect(dsn)
    transaction = conn.transaction()
    await transaction.start()

    async def write_postgres(sql: str) -> None:
        await conn.execute(sql)

    try:
        yield write_postgres
    finally:
        await transaction.commit()
        await conn.close()


async def test_versions_and_the_default(database: Database) -> None:
    store = database.prompts
    await store.create(_row("pmpt_a", 1))

    assert await store.add_version(_row("pmpt_a", 2), based_on=1) == "added"
    assert await store.add_version(_row("pmpt_a", 3, is_default=False), based_on=2) == "added"
    assert await store.add_version(_row("pmpt_a", 3), based_on=2) == "stale"
    assert await store.add_version(_row("pmpt_b", 2), based_on=1) == "missing"

    assert await _defaults(database, "pmpt_a") == [2]
    default = await store.get("pmpt_a", None)
    assert default is not None
    assert default.version == 2
    chosen = await store.set_default("pmpt_a", 3)
    assert chosen is not None
    assert (chosen.version, chosen.is_default) == (3, True)
    assert await _defaults(database, "pmpt_a") == [3]
    assert await store.set_default("pmpt_a", 4) is None
    assert await store.set_default("pmpt_b", 1) is None
    assert await store.delete("pmpt_a") is True
    assert await store.versions("pmpt_a") == []
    assert await store.delete("pmpt_a") is False


async def test_a_version_inserted_by_another_process_makes_the_update_stale(
    database: Database, database_url: str
) -> None:
    store = database.prompts
    await store.create(_row("pmpt_a", 1))

    async with _other_writer(database_url) as write:
        await write(INSERT.format(pid="pmpt_a", version=2))
        update = asyncio.create_task(store.add_version(_row("pmpt_a", 2), based_on=1))
        await asyncio.sleep(0.3)
        assert not update.done()  # waiting for the other writer's transaction

    assert await update == "stale"
    assert [row.version for row in await store.versions("pmpt_a")] == [1, 2]
    assert await _defaults(database, "pmpt_a") == [1]


async def test_list_pages_follow_creation_not_the_clock(database: Database) -> None:
    store = database.prompts
    ids = [f"pmpt_{i:02d}" for i in range(7)]
    for pid in reversed(ids):  # created last to first, all in the same second
        await store.create(_row(pid, 1))
    await store.add_version(_row(ids[0], 2), based_on=1)

    first = await store.list_page(after=None, limit=4, order="desc")
    assert first is not None
    rest = await store.list_page(after=first.data[-1].id, limit=4, order="desc")
    assert rest is not None

    assert [r.id for r in first.data + rest.data] == ids
    assert (first.has_more, rest.has_more) == (True, False)
    assert first.data[0].version == 2
    assert await store.list_page(after="pmpt_missing", limit=4, order="asc") is None
