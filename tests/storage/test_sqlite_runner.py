"""SQLite's runner: group commit (writes that queue up share a transaction, not a fate), brief
writes on the event loop's thread and others on the writer thread, one connection between them,
and checkpoints kept off the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.storage.database import Database
from agentloom.storage.sqlite_runner import CHECKPOINT_EVERY, ThreadRunner

TABLE = sa.table("scratch", sa.column("n", sa.Integer), sa.column("body", sa.Text))


@pytest.fixture
async def db(tmp_path: Path) -> Database:
    db = await Database.connect(f"sqlite:///{tmp_path / 'r.db'}", instance_id="inst_test")
    await db.migrate()
    await db.runner.write(lambda c: c.execute(sa.text("CREATE TABLE scratch (n INT, body TEXT)")))
    return db


def runner_of(db: Database) -> ThreadRunner:
    assert isinstance(db.runner, ThreadRunner)
    return db.runner


def insert(n: int, seen: list[str] | None = None, body: str = "") -> Callable[[Connection], int]:
    def run(conn: Connection) -> int:
        if seen is not None:
            seen.append(threading.current_thread().name)
        if n == 13:
            raise ValueError("unlucky")
        conn.execute(sa.insert(TABLE).values(n=n, body=body))
        return n

    return run


async def stored(db: Database) -> list[int]:
    return await db.runner.read(lambda c: list(c.scalars(sa.text("SELECT n FROM scratch"))))


async def test_brief_writes_run_on_the_event_loop_others_on_the_writer_thread(
    db: Database,
) -> None:
    runner, seen = runner_of(db), []
    await runner.write(insert(1, seen), brief=True)
    await runner.write(insert(2, seen))
    assert seen == [threading.current_thread().name, "agentloom-db-write"]
    assert await stored(db) == [1, 2]
    await db.aclose()


@pytest.mark.parametrize("brief", [False, True])
async def test_one_failing_write_does_not_undo_the_others(db: Database, brief: bool) -> None:
    runner = runner_of(db)
    writes = [runner.write(insert(n), brief=brief) for n in range(40)]
    results = await asyncio.gather(*writes, return_exceptions=True)

    assert [r for r in results if isinstance(r, ValueError)] == [results[13]]
    assert sorted(await stored(db)) == [n for n in range(40) if n != 13]
    await db.aclose()


async def test_a_cancelled_waiter_does_not_stop_the_writer(db: Database) -> None:
    waiter = asyncio.ensure_future(db.runner.write(insert(1)))
    await asyncio.sleep(0)  # the write is queued
    waiter.cancel()
    assert await db.runner.write(insert(2)) == 2
    assert sorted(await stored(db)) == [1, 2]  # the cancelled caller's write still happened
    await db.aclose()


async def test_brief_writes_wait_behind_a_long_one_without_blocking_the_loop(
    db: Database,
) -> None:
    """While the writer thread holds the connection, brief writes queue behind it there, in
    their order, and the event loop goes on."""
    runner, release, seen = runner_of(db), threading.Event(), []

    def long_write(conn: Connection) -> int:
        assert release.wait(10)
        return insert(0)(conn)

    first = asyncio.ensure_future(runner.write(long_write))
    await asyncio.sleep(0.05)  # the writer thread holds the connection
    briefs = [asyncio.ensure_future(runner.write(insert(n, seen), brief=True)) for n in (1, 2)]
    started = time.perf_counter()
    await asyncio.sleep(0.05)  # the loop is not blocked by the waiting writes
    assert time.perf_counter() - started < 1.0
    assert not any(b.done() for b in briefs)
    release.set()
    assert await asyncio.gather(first, *briefs) == [0, 1, 2]
    assert seen == ["agentloom-db-write"] * 2
    assert await stored(db) == [0, 1, 2]
    await db.aclose()


async def test_a_brief_write_never_waits_on_the_loop_for_another_process(
    db: Database, tmp_path: Path
) -> None:
    """Another process holds SQLite's write lock: a brief write goes to the writer thread,
    which waits for the lock (its busy_timeout), while the event loop goes on."""
    runner, seen = runner_of(db), []
    other = sqlite3.connect(tmp_path / "r.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the write lock, as a second process would hold it
    write = asyncio.ensure_future(runner.write(insert(7, seen), brief=True))
    started = time.perf_counter()
    await asyncio.sleep(0.2)
    assert time.perf_counter() - started < 1.0  # the loop was not blocked
    assert not write.done()
    other.execute("COMMIT")
    other.close()
    assert await write == 7
    assert seen == [threading.current_thread().name, "agentloom-db-write"]  # tried, then waited
    await runner.write(insert(8, seen), brief=True)  # the lock is free: here again
    assert seen[-1] == threading.current_thread().name
    assert await stored(db) == [7, 8]
    await db.aclose()


async def test_checkpoints_are_the_writer_threads(db: Database, tmp_path: Path) -> None:
    """The writer connection never checkpoints on commit (that would be on the event loop);
    the writer thread does, after every CHECKPOINT_EVERY writes, so the WAL's pages reach
    the database file."""
    runner = runner_of(db)

    def autocheckpoint(conn: Connection) -> int:
        return int(conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one())

    assert await runner.write(autocheckpoint, brief=True) == 0
    size = (tmp_path / "r.db").stat().st_size
    body = "x" * 4000  # about a page each
    for start in range(100, 100 + CHECKPOINT_EVERY * 2, 16):  # no unlucky 13
        await asyncio.gather(
            *(runner.write(insert(n, body=body), brief=True) for n in range(start, start + 16))
        )
    deadline = time.monotonic() + 10
    while (tmp_path / "r.db").stat().st_size < size + CHECKPOINT_EVERY * 4000:
        assert time.monotonic() < deadline, "the WAL was not checkpointed into the database"
        await asyncio.sleep(0.05)
    assert len(await stored(db)) == CHECKPOINT_EVERY * 2
    await db.aclose()
