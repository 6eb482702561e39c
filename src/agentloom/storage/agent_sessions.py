"""The agent session store: the rows behind :class:`agentloom.agents.sessions.SessionStore`.

A session (per agent name and session id) is a history and a state, both JSON text here (the
SDK reads and writes it); a tick is a record of one run of a scheduled agent, numbered per
session from 1.

Two read-modify-write operations hold across processes, on SQLite and PostgreSQL alike:

* :meth:`SqlAgentSessionStore.update_state` first inserts the session row if it is missing (a
  write: pysqlite opens the transaction, and SQLite's write lock, only at the first write
  statement), then reads it ``FOR UPDATE`` (the row lock on PostgreSQL; nothing on SQLite, which
  holds its write lock already), then writes the changed state.
* :meth:`SqlAgentSessionStore.start_tick` numbers the new tick inside its own ``INSERT ...
  SELECT`` (one write statement: atomic on SQLite), after taking a transaction-scoped advisory
  lock on the session on PostgreSQL (there may be no row yet to lock, and none is created).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.upsert import insert as upsert

S = schema.agent_sessions
T = schema.agent_ticks

_AGENT: sa.BindParameter[str] = sa.bindparam("of_agent", type_=sa.Text)
_SESSION: sa.BindParameter[str] = sa.bindparam("of_session", type_=sa.Text)
_IN_SESSION = (S.c.agent == _AGENT, S.c.session_id == _SESSION)
_TICK_IN_SESSION = (T.c.agent == _AGENT, T.c.session_id == _SESSION)
_TICK_COLUMNS = (
    T.c.id,
    T.c.agent,
    T.c.session_id,
    T.c.number,
    T.c.started_at,
    T.c.finished_at,
    T.c.status,
    T.c.summary,
)

_LOAD = sa.select(S.c.history, S.c.state, S.c.updated_at).where(*_IN_SESSION)
_LOCK_STATE = sa.select(S.c.state).where(*_IN_SESSION).with_for_update()
_SET_STATE = S.update().where(*_IN_SESSION)
_SESSIONS = sa.select(S.c.session_id).where(S.c.agent == _AGENT).order_by(S.c.updated_at.desc())
_DELETE_SESSION = S.delete().where(*_IN_SESSION)
_DELETE_TICKS = T.delete().where(*_TICK_IN_SESSION)
_START_TICK = T.insert().from_select(
    ["agent", "session_id", "number", "started_at", "status"],
    sa.select(
        _AGENT,
        _SESSION,
        sa.func.count() + 1,
        sa.bindparam("now", type_=sa.Float),
        sa.literal("running", sa.Text),
    )
    .select_from(T)
    .where(*_TICK_IN_SESSION),
)
_TICKS = sa.select(*_TICK_COLUMNS).where(*_TICK_IN_SESSION).order_by(T.c.id.desc())
_SESSION_LOCK_SPACE = 0x61676E74  # "agnt": pg_advisory_xact_lock(space, key) for sessions

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite


@frozen
class SessionRow:
    history: str  # a JSON array of messages
    state: str  # a JSON object
    updated_at: float  # unix seconds


@frozen
class TickRow:
    id: int
    agent: str
    session_id: str
    number: int
    started_at: float
    finished_at: float | None
    status: str
    summary: str


class SqlAgentSessionStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def load(self, agent: str, session_id: str) -> SessionRow | None:
        return await self._runner.read(partial(_load, agent, session_id))

    async def save_history(self, agent: str, session_id: str, history: str, *, now: float) -> None:
        """Replace the session's history (its state is left as it is)."""
        await self._runner.write_statement(
            partial(_upsert, agent, session_id, "history", history, now)
        )

    async def save_state(self, agent: str, session_id: str, state: str, *, now: float) -> None:
        """Replace the session's state (its history is left as it is)."""
        await self._runner.write_statement(partial(_upsert, agent, session_id, "state", state, now))

    async def update_state(
        self, agent: str, session_id: str, change: Callable[[str], str], *, now: float
    ) -> str:
        """Replace the session's state ``s`` with ``change(s)`` (``"{}"`` for a new session),
        atomically against every other writer; the new state."""
        return await self._runner.write(partial(_update_state, agent, session_id, change, now))

    async def delete(self, agent: str, session_id: str) -> bool:
        """Forget the session and its ticks; whether the session existed."""
        return await self._runner.write(partial(_delete, agent, session_id))

    async def sessions(self, agent: str) -> list[str]:
        """The agent's sessions, most recently saved first."""
        return await self._runner.read(partial(_sessions, agent))

    async def start_tick(self, agent: str, session_id: str, *, now: float) -> TickRow:
        """A ``running`` tick, numbered after the session's earlier ones."""
        return await self._runner.write(partial(_start_tick, agent, session_id, now))

    async def finish_tick(
        self, tick_id: int, status: str, summary: str, *, now: float
    ) -> TickRow | None:
        """The tick, ended at ``now``; ``None`` if there is no such tick."""
        finish = partial(_finish_tick, tick_id, status, summary, now)
        return await self._runner.write_statement(finish)

    async def ticks(self, agent: str, session_id: str, limit: int) -> list[TickRow]:
        """The session's latest ``limit`` ticks, oldest first."""
        return await self._runner.read(partial(_ticks, agent, session_id, limit))


def _where(agent: str, session_id: str) -> dict[str, str]:
    return {"of_agent": agent, "of_session": session_id}


def _load(agent: str, session_id: str, conn: Connection) -> SessionRow | None:
    row = conn.execute(_LOAD, _where(agent, session_id)).first()
    return None if row is None else SessionRow(row.history, row.state, row.updated_at)


def _insert(conn: Connection) -> sqlite.Insert | postgresql.Insert:
    return upsert(conn, S)


def _upsert(
    agent: str, session_id: str, column: str, text: str, now: float, conn: Connection
) -> None:
    insert = _insert(conn).values(
        agent=agent, session_id=session_id, updated_at=now, **{column: text}
    )
    changed = {column: insert.excluded[column], "updated_at": insert.excluded.updated_at}
    conn.execute(
        insert.on_conflict_do_update(index_elements=[S.c.agent, S.c.session_id], set_=changed)
    )


def _update_state(
    agent: str, session_id: str, change: Callable[[str], str], now: float, conn: Connection
) -> str:
    new = _insert(conn).values(agent=agent, session_id=session_id, updated_at=now)
    conn.execute(new.on_conflict_do_nothing(index_elements=[S.c.agent, S.c.session_id]))
    state = change(conn.execute(_LOCK_STATE, _where(agent, session_id)).scalar_one())
    conn.execute(_SET_STATE.values(state=state, updated_at=now), _where(agent, session_id))
    return state


def _delete(agent: str, session_id: str, conn: Connection) -> bool:
    gone = conn.execute(_DELETE_SESSION, _where(agent, session_id)).rowcount
    conn.execute(_DELETE_TICKS, _where(agent, session_id))
    return gone > 0


def _sessions(agent: str, conn: Connection) -> list[str]:
    return list(conn.scalars(_SESSIONS, {"of_agent": agent}))


def _start_tick(agent: str, session_id: str, now: float, conn: Connection) -> TickRow:
    if conn.dialect.name == "postgresql":
        key = _session_key(agent, session_id)
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_SESSION_LOCK_SPACE, key)))
    started = conn.execute(
        _START_TICK.returning(*_TICK_COLUMNS), {**_where(agent, session_id), "now": now}
    )
    return _tick(started.one())


def _session_key(agent: str, session_id: str) -> int:
    """A 32-bit signed key for the session (a collision only makes two sessions wait in turn)."""
    digest = zlib.crc32(f"{len(agent)}:{agent}:{session_id}".encode())
    return digest - (1 << 32) if digest >= 1 << 31 else digest


def _finish_tick(
    tick_id: int, status: str, summary: str, now: float, conn: Connection
) -> TickRow | None:
    finish = T.update().where(T.c.id == tick_id)
    finish = finish.values(finished_at=now, status=status, summary=summary)
    row = conn.execute(finish.returning(*_TICK_COLUMNS)).first()
    return None if row is None else _tick(row)


def _ticks(agent: str, session_id: str, limit: int, conn: Connection) -> list[TickRow]:
    rows = conn.execute(_TICKS.limit(limit), _where(agent, session_id)).all()
    return [_tick(row) for row in reversed(rows)]


def _tick(row: Any) -> TickRow:
    return TickRow(
        id=row.id,
        agent=row.agent,
        session_id=row.session_id,
        number=row.number,
        started_at=row.started_at,
        finished_at=row.finished_at,
        status=row.status,
        summary=row.summary,
    )
