"""The SQLite runner's group commit: writes that queue up share a transaction, not a fate."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.storage.database import Database

TABLE = sa.table("scratch", sa.column("n", sa.Integer))


@pytest.fixture
async def sqlite(tmp_path: Path) -> Database:
    db = await Database.connect(f"sqlite:///{tmp_path / 'r.db'}", instance_id="inst_test")
    await db.migrate()
    await db.runner.write(lambda c: c.execute(sa.text("CREATE TABLE scratch (n INTEGER)")))
    return db


def insert(n: int) -> Callable[[Connection], int]:
    def run(conn: Connection) -> int:
        if n == 13:
            raise ValueError("unlucky")
        conn.execute(sa.insert(TABLE).values(n=n))
        return n

    return run


async def test_one_failing_write_does_not_undo_the_others(sqlite: Database) -> None:
    writes = [sqlite.runner.write(insert(n)) for n in range(40)]
    results = await asyncio.gather(*writes, return_exceptions=True)

    assert [r for r in results if isinstance(r, ValueError)] == [results[13]]
    assert [r for r in results if not isinstance(r, Exception)] == [n for n in range(40) if n != 13]
    stored = await sqlite.runner.read(lambda c: sorted(c.scalars(sa.text("SELECT n FROM scratch"))))
    assert stored == [n for n in range(40) if n != 13]
    await sqlite.aclose()


async def test_a_cancelled_waiter_does_not_stop_the_writer(sqlite: Database) -> None:
    waiter = asyncio.ensure_future(sqlite.runner.write(insert(1)))
    await asyncio.sleep(0)  # the write is queued
    waiter.cancel()
    assert await sqlite.runner.write(insert(2)) == 2
    count = await sqlite.runner.read(lambda c: c.scalar(sa.text("SELECT count(*) FROM scratch")))
    assert count == 2  # the cancelled caller's write still happened
    await sqlite.aclose()
