"""Agent sessions on the storage layer, on SQLite and PostgreSQL alike: the round trip, state
merges and tick numbers from two stores at once (as two processes would), and a SQLite file
written before the sessions moved here (no migration record) that opens as it is."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from agentloom.agents.saved_history import history_to_json
from agentloom.agents.sessions import SessionStore
from agentloom.errors import NotFoundError
from agentloom.llm.types import Message, MessageToolCall
from agentloom.storage import schema
from agentloom.storage.database import MIGRATIONS, Database

HISTORY = (
    Message.user("What is 6 x 7?"),
    Message.assistant(None, (MessageToolCall("call_1", "calculator", '{"expression": "6*7"}'),)),
    Message.tool("call_1", "42", name="calculator"),
    Message.assistant("It is 42 — ✓."),
)
TABLES = {"agent_sessions", "agent_ticks", "memories"}

# The schema the SDK created in ``agents.db`` before these tables moved to the storage layer.
OLD_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS agent_sessions (
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        history TEXT NOT NULL DEFAULT '[]',
        state TEXT NOT NULL DEFAULT '{}',
        updated_at REAL NOT NULL,
        PRIMARY KEY (agent, session_id))""",
    """CREATE TABLE IF NOT EXISTS agent_ticks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        agent TEXT NOT NULL,
        session_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        status TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS agent_ticks_session ON agent_ticks (agent, session_id, id)",
)

StoreFactory = Callable[[], SessionStore]


@pytest.fixture
async def stores(database_url: str) -> AsyncIterator[StoreFactory]:
    """New stores on the test database, each with a database of its own (closed after)."""
    made: list[SessionStore] = []

    def make() -> SessionStore:
        made.append(SessionStore.at(database_url))
        return made[-1]

    yield make
    for store in made:
        await store.aclose()


async def test_a_session_round_trip(stores: StoreFactory) -> None:
    store = stores()
    assert (await store.load("operative", "s1")).updated_at is None

    await store.update_state("operative", "s1", {"colour": "teal", "count": 1})
    await store.save_history("operative", "s1", HISTORY)
    state = await store.update_state("operative", "s1", {"count": 2, "colour": None})
    await store.save_history("operative", "s2", HISTORY[:1])

    saved = await store.load("operative", "s1")
    assert saved.history == HISTORY
    assert saved.state == state == {"count": 2}
    assert saved.updated_at is not None
    assert await store.sessions("operative") == ["s2", "s1"]
    await store.save_state("operative", "s1", {"fresh": [1, 2], "nested": {"ok": True}})
    assert (await store.load("operative", "s1")).state == {"fresh": [1, 2], "nested": {"ok": True}}
    assert await store.delete("operative", "s1")
    assert not await store.delete("operative", "s1")
    assert await store.sessions("operative") == ["s2"]


async def test_state_merges_from_two_stores_at_once_lose_nothing(stores: StoreFactory) -> None:
    pair = (stores(), stores())

    await asyncio.gather(
        *(pair[n % 2].update_state("operative", "busy", {f"key{n}": n}) for n in range(24))
    )

    state = (await pair[1].load("operative", "busy")).state
    assert state == {f"key{n}": n for n in range(24)}


async def test_ticks_from_two_stores_at_once_are_numbered_once_each(stores: StoreFactory) -> None:
    pair = (stores(), stores())

    started = await asyncio.gather(
        *(pair[n % 2].start_tick("operative", "busy") for n in range(12)),
        pair[0].start_tick("operative", "other"),
    )

    assert sorted(tick.number for tick in started[:-1]) == list(range(1, 13))
    assert started[-1].number == 1
    done = await pair[1].finish_tick(started[0].id, "ok", "fine")
    assert (done.status, done.summary, done.number) == ("ok", "fine", started[0].number)
    assert done.finished_at is not None
    listed = await pair[0].ticks("operative", "busy", limit=3)
    assert [tick.number for tick in listed] == [10, 11, 12]
    assert await pair[0].sessions("operative") == []  # ticks alone make no session
    with pytest.raises(NotFoundError):
        await pair[0].finish_tick(10**9, "ok", "")


async def test_a_store_on_an_open_database_leaves_it_open(database: Database) -> None:
    store = SessionStore.on(database)
    await store.save_history("operative", "s1", HISTORY)
    await store.aclose()

    assert (await SessionStore.on(database).load("operative", "s1")).history == HISTORY
    assert await database.agent_sessions.sessions("operative") == ["s1"]


def _differences(conn: Connection) -> list[Any]:
    context = MigrationContext.configure(conn, opts={"compare_type": True})
    return [d for d in compare_metadata(context, schema.metadata) if _mine(d)]


def _mine(difference: Any) -> bool:
    """Whether a difference (a tuple, or a list of column changes) is about the agent tables."""
    if isinstance(difference, list):
        return any(_mine(d) for d in difference)
    return any(getattr(part, "name", None) in TABLES or part in TABLES for part in difference)


async def test_the_migration_matches_the_schema(database: Database) -> None:
    assert await database.runner.read(_differences) == []


# --- a file written before the move ----------------------------------------------------------


def _old_file(path: Path) -> None:
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        for statement in OLD_SCHEMA:
            db.execute(statement)
        db.execute(
            "INSERT INTO agent_sessions VALUES ('operative', 'old', ?, ?, 1700000000.5)",
            (history_to_json(HISTORY), json.dumps({"kept": "yes"})),
        )
        db.executemany(
            "INSERT INTO agent_ticks (agent, session_id, number, started_at, finished_at, status,"
            " summary) VALUES ('operative', 'old', ?, 1700000000.0, 1700000001.0, 'ok', 'done')",
            [(1,), (2,)],
        )
    db.close()


def _revision_and_tables(conn: Connection) -> tuple[str | None, set[str]]:
    revision = MigrationContext.configure(conn).get_current_revision()
    return revision, set(sa.inspect(conn).get_table_names())


async def test_a_file_from_before_the_move_opens_as_it_is(tmp_path: Path) -> None:
    _old_file(tmp_path / "data" / "agents.db")
    store = SessionStore.in_dir(tmp_path / "data")
    try:
        saved = await store.load("operative", "old")
        tick = await store.start_tick("operative", "old")
        merged = await store.update_state("operative", "old", {"new": 1})
        ticks = await store.ticks("operative", "old")
    finally:
        await store.aclose()

    assert (saved.history, saved.state, saved.updated_at) == (
        HISTORY,
        {"kept": "yes"},
        1700000000.5,
    )
    assert tick.number == 3
    assert merged == {"kept": "yes", "new": 1}
    assert [(t.number, t.status) for t in ticks] == [(1, "ok"), (2, "ok"), (3, "running")]
    database = await Database.connect(f"sqlite:///{store.path}", instance_id="check")
    try:
        revision, tables = await database.runner.read(_revision_and_tables)
        differences = await database.runner.read(_differences)
    finally:
        await database.aclose()
    assert revision == ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert {"responses", "conversations", "containers", *TABLES} <= tables
    assert [_what(d) for d in differences] == [("modify_nullable", "agent_ticks", "id")]


def _what(difference: Any) -> tuple[str, str, str]:
    """The kind, table and column of a column difference. The only one an old file has: its
    ``id INTEGER PRIMARY KEY`` is not declared ``NOT NULL`` (it is the rowid: never null)."""
    kind, _schema, table, column, *_ = difference[0]
    return kind, table, column
