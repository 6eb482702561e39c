"""Persistent agent sessions: a conversation history, a saved state and tick records, per
(agent name, session id), in one SQLite file (``<data_dir>/agents.db``).

The file is in WAL mode and every change is its own transaction (read-modify-write ones take the
write lock first), so two processes may share it: :meth:`SessionStore.update_state` merges keys
atomically, whoever else writes. Calls run in a worker thread, each on its own connection.
Histories are stored as JSON by :mod:`agentloom.agents.saved_history` (tool calls and
reasoning items included).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from agentloom.agents.saved_history import (
    SessionDataError,
    history_from_json,
    history_to_json,
    message_from_json,
    message_to_json,
    parse_json,
)
from agentloom.errors import NotFoundError
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.types import Message

__all__ = [
    "DATABASE_NAME",
    "SavedSession",
    "SessionDataError",
    "SessionStore",
    "TickRecord",
    "TickStatus",
    "message_from_json",
    "message_to_json",
]

DATABASE_NAME = "agents.db"
TickStatus = Literal["running", "ok", "incomplete", "error"]
T = TypeVar("T")

_SCHEMA = (
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
_TICK_COLUMNS = "id, agent, session_id, number, started_at, finished_at, status, summary"


def _state(text: str) -> JSONObject:
    value = parse_json(text)
    if not isinstance(value, dict):
        raise SessionDataError("a stored state is not a JSON object")
    return value


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SavedSession:
    """A session as stored (empty history and state when it was never saved)."""

    agent: str
    session_id: str
    history: tuple[Message, ...] = ()
    state: JSONObject = field(default_factory=dict)
    updated_at: float | None = None  # None: never saved


@dataclass(frozen=True, slots=True)
class TickRecord:
    """One tick of a scheduled agent: when it ran, how it ended, what it said."""

    id: int
    agent: str
    session_id: str
    number: int  # 1 for a session's first tick
    started_at: float
    finished_at: float | None
    status: TickStatus
    summary: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TickRecord:
        return cls(*tuple(row))


# --- the store -------------------------------------------------------------------------------


class SessionStore:
    """Sessions of agents in the SQLite file ``path`` (created with its folder on first use)."""

    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout  # seconds to wait for another writer's lock
        self._ready = False
        self._ready_lock = threading.Lock()

    @classmethod
    def in_dir(cls, data_dir: Path) -> SessionStore:
        return cls(data_dir / DATABASE_NAME)

    async def load(self, agent: str, session_id: str) -> SavedSession:
        return await self._run(lambda db: _load(db, agent, session_id))

    async def save_history(self, agent: str, session_id: str, history: Sequence[Message]) -> None:
        """Replace the session's history (its state is left as it is)."""
        text = history_to_json(history)
        await self._run(lambda db: _upsert(db, agent, session_id, "history", text))

    async def save_state(self, agent: str, session_id: str, state: Mapping[str, JSONValue]) -> None:
        """Replace the session's whole state (see :meth:`update_state` to change keys)."""
        text = json.dumps(dict(state), ensure_ascii=False)
        await self._run(lambda db: _upsert(db, agent, session_id, "state", text))

    async def update_state(
        self, agent: str, session_id: str, changes: Mapping[str, JSONValue]
    ) -> JSONObject:
        """Set ``changes`` in the session's state (a ``None`` value deletes its key), atomically
        against other writers; the state afterwards."""
        return await self._run(lambda db: _merge_state(db, agent, session_id, dict(changes)))

    async def delete(self, agent: str, session_id: str) -> bool:
        """Forget the session and its ticks; whether it existed."""
        return await self._run(lambda db: _delete(db, agent, session_id))

    async def sessions(self, agent: str) -> list[str]:
        """The agent's saved sessions, most recently saved first."""
        query = "SELECT session_id FROM agent_sessions WHERE agent = ? ORDER BY updated_at DESC"
        rows = await self._run(lambda db: db.execute(query, (agent,)).fetchall())
        return [str(row[0]) for row in rows]

    async def start_tick(self, agent: str, session_id: str) -> TickRecord:
        """Record a tick as ``running`` (numbered after the session's earlier ticks)."""
        return await self._run(lambda db: _start_tick(db, agent, session_id))

    async def finish_tick(self, tick_id: int, status: TickStatus, summary: str) -> TickRecord:
        return await self._run(lambda db: _finish_tick(db, tick_id, status, summary))

    async def ticks(self, agent: str, session_id: str, limit: int = 20) -> list[TickRecord]:
        """The session's latest ``limit`` ticks, oldest first."""
        query = (
            f"SELECT {_TICK_COLUMNS} FROM agent_ticks WHERE agent = ? AND session_id = ? "
            "ORDER BY id DESC LIMIT ?"
        )
        rows = await self._run(lambda db: db.execute(query, (agent, session_id, limit)).fetchall())
        return [TickRecord.from_row(row) for row in reversed(rows)]

    # --- plumbing ----------------------------------------------------------------------------

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.to_thread(self._call, work)

    def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        self._prepare()
        db = self._connect()
        try:
            return work(db)
        finally:
            db.close()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA synchronous = NORMAL")
        return db

    def _prepare(self) -> None:
        with self._ready_lock:
            if self._ready:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = self._connect()
            try:
                db.execute("PRAGMA journal_mode = WAL")
                with _transaction(db):
                    for statement in _SCHEMA:
                        db.execute(statement)
            finally:
                db.close()
            self._ready = True


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` (the write lock first, so a read-modify-write cannot interleave with
    another writer's) ... ``COMMIT``, or ``ROLLBACK`` on an error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _load(db: sqlite3.Connection, agent: str, session_id: str) -> SavedSession:
    row = db.execute(
        "SELECT history, state, updated_at FROM agent_sessions WHERE agent = ? AND session_id = ?",
        (agent, session_id),
    ).fetchone()
    if row is None:
        return SavedSession(agent, session_id)
    return SavedSession(
        agent,
        session_id,
        history_from_json(row["history"]),
        _state(row["state"]),
        row["updated_at"],
    )


def _upsert(
    db: sqlite3.Connection,
    agent: str,
    session_id: str,
    column: Literal["history", "state"],
    text: str,
) -> None:
    db.execute(
        f"INSERT INTO agent_sessions (agent, session_id, {column}, updated_at) VALUES (?, ?, ?, ?) "
        f"ON CONFLICT (agent, session_id) DO UPDATE SET {column} = excluded.{column}, "
        "updated_at = excluded.updated_at",
        (agent, session_id, text, time.time()),
    )


def _merge_state(
    db: sqlite3.Connection, agent: str, session_id: str, changes: JSONObject
) -> JSONObject:
    with _transaction(db):
        row = db.execute(
            "SELECT state FROM agent_sessions WHERE agent = ? AND session_id = ?",
            (agent, session_id),
        ).fetchone()
        state = _state(row["state"]) if row is not None else {}
        for key, value in changes.items():
            if value is None:
                state.pop(key, None)
            else:
                state[key] = value
        _upsert(db, agent, session_id, "state", json.dumps(state, ensure_ascii=False))
    return state


def _delete(db: sqlite3.Connection, agent: str, session_id: str) -> bool:
    with _transaction(db):
        where = (agent, session_id)
        gone = db.execute(
            "DELETE FROM agent_sessions WHERE agent = ? AND session_id = ?", where
        ).rowcount
        db.execute("DELETE FROM agent_ticks WHERE agent = ? AND session_id = ?", where)
    return gone > 0


def _start_tick(db: sqlite3.Connection, agent: str, session_id: str) -> TickRecord:
    with _transaction(db):
        (count,) = db.execute(
            "SELECT COUNT(*) FROM agent_ticks WHERE agent = ? AND session_id = ?",
            (agent, session_id),
        ).fetchone()
        cursor = db.execute(
            "INSERT INTO agent_ticks (agent, session_id, number, started_at, status) "
            "VALUES (?, ?, ?, ?, 'running')",
            (agent, session_id, count + 1, time.time()),
        )
        assert cursor.lastrowid is not None
        return _tick(db, cursor.lastrowid)


def _finish_tick(
    db: sqlite3.Connection, tick_id: int, status: TickStatus, summary: str
) -> TickRecord:
    with _transaction(db):
        db.execute(
            "UPDATE agent_ticks SET finished_at = ?, status = ?, summary = ? WHERE id = ?",
            (time.time(), status, summary, tick_id),
        )
        return _tick(db, tick_id)


def _tick(db: sqlite3.Connection, tick_id: int) -> TickRecord:
    row = db.execute(f"SELECT {_TICK_COLUMNS} FROM agent_ticks WHERE id = ?", (tick_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no tick {tick_id}")
    return TickRecord.from_row(row)
