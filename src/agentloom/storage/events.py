"""The stream events of background responses, stored as they are made.

Any process can replay a response's events after a ``sequence_number`` and follow new ones:
each batch written notifies the listeners of :data:`EVENTS_CHANNEL` (PostgreSQL) with the
response's id.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.notify import notify
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner
from agentloom.storage.upsert import insert as upsert

E = schema.response_events
EVENTS_CHANNEL = "agentloom_events"
# a response's last event: a follower stops at it (retention keeps it when it deletes the others)
TERMINAL_EVENTS = frozenset({"response.completed", "response.failed", "response.incomplete"})


@frozen
class StoredEvent:
    sequence_number: int
    type: str
    body: str  # the event as JSON


class SqlEventStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def append(self, response_id: str, events: Sequence[StoredEvent]) -> None:
        if events:
            await self._runner.write(partial(_append, response_id, events))

    async def after(self, response_id: str, after: int, limit: int = 1000) -> list[StoredEvent]:
        """The response's events with a ``sequence_number`` above ``after``, in order."""
        read = partial(_after, response_id, after, limit)
        return await self._runner.read(read)

    async def clear(self, response_id: str) -> None:
        """Forget the response's events (it runs again from the start)."""
        await self._runner.write(partial(_clear, response_id))


def _append(
    response_id: str, events: Sequence[StoredEvent], project: Project, conn: Connection
) -> None:
    rows = [
        {
            "response_id": response_id,
            "sequence_number": e.sequence_number,
            "project_id": project.id,
            "type": e.type,
            "body": e.body,
        }
        for e in events
    ]
    # the same event again (a write resent after a fault, when it had landed) changes nothing
    conn.execute(upsert(conn, E).on_conflict_do_nothing(), rows)
    notify(conn, EVENTS_CHANNEL, response_id)


def _after(
    response_id: str, after: int, limit: int, project: Project, conn: Connection
) -> list[StoredEvent]:
    query = (
        sa.select(E.c.sequence_number, E.c.type, E.c.body)
        .where(project.rows(E, E.c.response_id == response_id, E.c.sequence_number > after))
        .order_by(E.c.sequence_number)
        .limit(limit)
    )
    return [StoredEvent(r.sequence_number, r.type, r.body) for r in conn.execute(query)]


def _clear(response_id: str, project: Project, conn: Connection) -> None:
    conn.execute(project.delete(E, E.c.response_id == response_id))
