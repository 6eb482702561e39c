"""Persistent agent sessions: a conversation history, a saved state and tick records, per
(agent name, session id), kept by the storage layer (:mod:`agentloom.storage.agent_sessions`)
on a SQLite file (by default ``<data_dir>/agents.db``) or on PostgreSQL.

Every change is its own transaction, and the read-modify-write ones lock the session first, so
several processes may share one database: :meth:`SessionStore.update_state` merges keys
atomically, whoever else writes, and :meth:`SessionStore.start_tick` numbers ticks without
gaps or repeats. A SQLite file is in WAL mode; its calls run in the storage layer's threads.
Histories are stored as JSON by :mod:`agentloom.agents.saved_history` (tool calls and reasoning
items included). A file written by earlier versions (the same tables, no migration record)
opens as it is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast, get_args

from agentloom.agents.saved_history import (
    SessionDataError,
    history_from_json,
    history_to_json,
    message_from_json,
    message_to_json,
    parse_json,
)
from agentloom.agents.store_database import StoreDatabase
from agentloom.errors import NotFoundError
from agentloom.frozen import frozen
from agentloom.json_types import JSONObject, JSONValue
from agentloom.llm.types import Message
from agentloom.offload import off_loop

if TYPE_CHECKING:
    from agentloom.storage.agent_sessions import SqlAgentSessionStore, TickRow
    from agentloom.storage.database import Database

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
_STATUSES = frozenset(get_args(TickStatus))
LARGE_HISTORY = 64 * 1024  # characters of stored history from which it is parsed off the loop


# --- records ---------------------------------------------------------------------------------


@frozen
class SavedSession:
    """A session as stored (empty history and state when it was never saved)."""

    agent: str
    session_id: str
    history: tuple[Message, ...] = ()
    state: JSONObject = field(default_factory=dict)
    updated_at: float | None = None  # None: never saved


@frozen
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
    def from_row(cls, row: TickRow) -> TickRecord:
        if row.status not in _STATUSES:
            raise SessionDataError(f"tick {row.id} has an unknown status {row.status!r}")
        return cls(
            id=row.id,
            agent=row.agent,
            session_id=row.session_id,
            number=row.number,
            started_at=row.started_at,
            finished_at=row.finished_at,
            status=cast(TickStatus, row.status),
            summary=row.summary,
        )


# --- the store -------------------------------------------------------------------------------


class SessionStore:
    """Sessions of agents, in one database:

    * ``SessionStore(path)`` / ``SessionStore.in_dir(data_dir)``: the SQLite file ``path``
      (``<data_dir>/agents.db``), created with its folder on first use;
    * ``SessionStore.at(url)``: the database at ``url`` (``sqlite:///PATH``,
      ``postgresql://user@host:port/db``), migrated on first use;
    * ``SessionStore.on(database)``: an open, migrated :class:`Database` (the server's, say).

    :meth:`aclose` closes a database the store opened (not one it was given).
    """

    def __init__(self, where: Path | StoreDatabase) -> None:
        self.path = where if isinstance(where, Path) else None  # the SQLite file, if given one
        self._database = (
            where if isinstance(where, StoreDatabase) else StoreDatabase.sqlite_file(where)
        )

    @classmethod
    def in_dir(cls, data_dir: Path) -> SessionStore:
        return cls(data_dir / DATABASE_NAME)

    @classmethod
    def at(cls, url: str) -> SessionStore:
        return cls(StoreDatabase(url=url))

    @classmethod
    def on(cls, database: Database) -> SessionStore:
        return cls(StoreDatabase(database=database))

    async def aclose(self) -> None:
        await self._database.aclose()

    async def load(self, agent: str, session_id: str) -> SavedSession:
        row = await (await self._rows()).load(agent, session_id)
        if row is None:
            return SavedSession(agent, session_id)
        large = len(row.history) >= LARGE_HISTORY
        history = await off_loop(large, history_from_json, row.history)
        return SavedSession(agent, session_id, history, _state(row.state), row.updated_at)

    async def save_history(self, agent: str, session_id: str, history: Sequence[Message]) -> None:
        """Replace the session's history (its state is left as it is)."""
        text = history_to_json(history)
        await (await self._rows()).save_history(agent, session_id, text, now=time.time())

    async def save_state(self, agent: str, session_id: str, state: Mapping[str, JSONValue]) -> None:
        """Replace the session's whole state (see :meth:`update_state` to change keys)."""
        text = _dumps(dict(state))
        await (await self._rows()).save_state(agent, session_id, text, now=time.time())

    async def update_state(
        self, agent: str, session_id: str, changes: Mapping[str, JSONValue]
    ) -> JSONObject:
        """Set ``changes`` in the session's state (a ``None`` value deletes its key), atomically
        against other writers; the state afterwards."""
        merge = partial(_merged, dict(changes))
        rows = await self._rows()
        return _state(await rows.update_state(agent, session_id, merge, now=time.time()))

    async def delete(self, agent: str, session_id: str) -> bool:
        """Forget the session and its ticks; whether it existed."""
        return await (await self._rows()).delete(agent, session_id)

    async def sessions(self, agent: str) -> list[str]:
        """The agent's saved sessions, most recently saved first."""
        return await (await self._rows()).sessions(agent)

    async def start_tick(self, agent: str, session_id: str) -> TickRecord:
        """Record a tick as ``running`` (numbered after the session's earlier ticks)."""
        row = await (await self._rows()).start_tick(agent, session_id, now=time.time())
        return TickRecord.from_row(row)

    async def finish_tick(self, tick_id: int, status: TickStatus, summary: str) -> TickRecord:
        rows = await self._rows()
        row = await rows.finish_tick(tick_id, status, summary, now=time.time())
        if row is None:
            raise NotFoundError(f"no tick {tick_id}")
        return TickRecord.from_row(row)

    async def ticks(self, agent: str, session_id: str, limit: int = 20) -> list[TickRecord]:
        """The session's latest ``limit`` ticks, oldest first."""
        rows = await (await self._rows()).ticks(agent, session_id, limit)
        return [TickRecord.from_row(row) for row in rows]

    async def _rows(self) -> SqlAgentSessionStore:
        return (await self._database.get()).agent_sessions


def _state(text: str) -> JSONObject:
    value = parse_json(text)
    if not isinstance(value, dict):
        raise SessionDataError("a stored state is not a JSON object")
    return value


def _dumps(state: JSONObject) -> str:
    return json.dumps(state, ensure_ascii=False)


def _merged(changes: JSONObject, stored: str) -> str:
    """The stored state with ``changes`` set (a ``None`` value deletes its key)."""
    state = _state(stored)
    for key, value in changes.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return _dumps(state)
