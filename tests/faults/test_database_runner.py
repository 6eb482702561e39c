"""The PostgreSQL runner when the server's connections are ended under it.

A connection the database ended while it sat in a pool costs no caller an error: reads,
transactions, single statements and the hot path's statements run on a fresh one. A statement
in flight when its connection is ended is run again where that cannot apply it twice (a read; a
transaction that had not committed), and is otherwise a clear
:class:`~agentloom.errors.DatabaseUnavailableError`, never a driver error. The database
turned away for a while answers the same error, and the pools recover when it is back.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.errors import DatabaseUnavailableError
from agentloom.storage.base import ResponseRow
from agentloom.storage.database import Database
from tests.faults.postgres import away, terminate

BOUND = 20.0  # seconds: every test here is over long before this, or it hung


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[Database]:
    database = await Database.connect(postgres_url, instance_id=f"inst_{secrets.token_hex(6)}")
    await database.migrate()
    await database.heartbeat()
    yield database
    await database.aclose()


def _row(response_id: str) -> ResponseRow:
    body = json.dumps({"id": response_id, "status": "completed", "model": "m"})
    return ResponseRow(response_id, 1700000000.0, "m", "completed", None, body)


def _one(conn: Connection) -> int:
    return int(conn.scalar(sa.text("SELECT 1")) or 0)


async def _warm(db: Database) -> None:
    """Each of the three pools holds an open connection: autocommit (a read, a statement),
    transactions, the hot path's."""
    await db.runner.read(_one)
    await db.runner.write(_one)
    await db.runner.write_statement(_one)
    await db.responses.save(_row(f"resp_warm{secrets.token_hex(8)}"), [], [])


async def test_connections_ended_in_the_pools_cost_no_caller_an_error(
    db: Database, postgres_url: str
) -> None:
    with anyio.fail_after(BOUND):
        for round_ in range(3):
            await _warm(db)
            assert await terminate(postgres_url) == 3  # each pool's connection
            assert await db.runner.read(_one) == 1
            assert await db.runner.write(_one) == 1
            assert await db.runner.write_statement(_one) == 1
            await db.responses.save(_row(f"resp_after{round_}{secrets.token_hex(8)}"), [], [])
            assert await db.heartbeat() is None


async def _end_when_running(url: str, query_like: str) -> int:
    """End the session running a query ``LIKE query_like`` once it runs."""
    while True:
        ended = await terminate(url, query_like=query_like)
        if ended:
            return ended
        await asyncio.sleep(0.01)


async def test_a_read_in_flight_is_read_again(db: Database, postgres_url: str) -> None:
    def slow(conn: Connection) -> int:
        return int(conn.scalar(sa.text("SELECT 7 FROM pg_sleep(0.5)")) or 0)

    with anyio.fail_after(BOUND):
        read, ended = await asyncio.gather(
            db.runner.read(slow), _end_when_running(postgres_url, "%pg_sleep(0.5)%")
        )

    assert (read, ended) == (7, 1)


async def test_an_uncommitted_transaction_in_flight_is_run_again(
    db: Database, postgres_url: str
) -> None:
    """The server rolled it back when the session ended: running it again applies it once."""
    marker = f"resp_tx{secrets.token_hex(8)}"
    runs = 0

    def insert_then_wait(conn: Connection) -> None:
        nonlocal runs
        runs += 1
        conn.execute(
            sa.text("INSERT INTO instances (id, heartbeat_at) VALUES (:id, 0)"), {"id": marker}
        )
        conn.execute(sa.text("SELECT pg_sleep(0.5)"))

    with anyio.fail_after(BOUND):
        await asyncio.gather(
            db.runner.write(insert_then_wait), _end_when_running(postgres_url, "%pg_sleep(0.5)%")
        )
        count = await db.runner.read(
            lambda c: c.scalar(
                sa.text("SELECT count(*) FROM instances WHERE id = :id"), {"id": marker}
            )
        )

    assert runs == 2
    assert count == 1


@pytest.mark.parametrize("path", ["statement", "hot path"])
async def test_a_single_statement_lost_in_flight_is_database_unavailable(
    db: Database, postgres_url: str, path: str
) -> None:
    """It may have taken effect: it is not run again, and the caller is told plainly."""

    async def statement() -> None:
        if path == "statement":
            await db.runner.write_statement(lambda c: c.execute(sa.text("SELECT pg_sleep(0.5)")))
        else:
            await db.runner.execute("SELECT pg_sleep(0.5)")

    with anyio.fail_after(BOUND), pytest.raises(DatabaseUnavailableError) as caught:
        await asyncio.gather(statement(), _end_when_running(postgres_url, "%pg_sleep(0.5)%"))

    assert caught.value.code == "database_unavailable"
    assert await db.runner.read(_one) == 1  # and the next statement runs


async def test_the_database_turned_away_is_unavailable_then_comes_back(
    db: Database, postgres_url: str
) -> None:
    with anyio.fail_after(BOUND):
        await _warm(db)
        async with away(postgres_url):
            for attempt in (
                db.runner.read(_one),
                db.runner.write(_one),
                db.runner.write_statement(_one),
                db.responses.save(_row(f"resp_away{secrets.token_hex(8)}"), [], []),
            ):
                with pytest.raises(DatabaseUnavailableError):
                    await attempt
        await _warm(db)  # back: every pool serves again
