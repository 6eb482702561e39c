"""Runs of managed agents: one row per run, its job queued with it.

A run asked for (``POST .../run``) is stored ``queued`` with its job in one transaction, unless
the agent has a run queued or going (one run of an agent at a time). A tick of the agent's
schedule is a job first; its run row is made when the job starts. Either way a run starts
(:meth:`SqlAgentRunStore.begin`) only when no other run of the agent is ``in_progress``: the
check and the change are one transaction, after locking the agent's row on PostgreSQL.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.jobs import JobRow, enqueue
from agentloom.storage.managed_agents import TakenMessages, take_queued
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

R = schema.managed_agent_runs
A = schema.managed_agents
ACTIVE = ("queued", "in_progress")
SETTLED = frozenset({"completed", "failed", "cancelled"})


@frozen
class RunRow:
    id: str
    agent_id: str
    status: str  # queued, in_progress, completed, failed, cancelled
    trigger: str  # manual, message, schedule
    created_at: float
    error: str | None = None  # a JSON object: code, message
    reply_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    started_at: float | None = None
    ended_at: float | None = None


_COLUMNS = tuple(R.c[name] for name in field_names(RunRow))


@frozen
class Begun:
    run: RunRow
    taken: TakenMessages


class SqlAgentRunStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def queue(self, run: RunRow, job: JobRow) -> RunRow | None:
        """Store ``run`` and queue its job; ``None`` (nothing stored) when the agent already
        has a run queued or in progress."""
        return await self._runner.write(partial(_queue, run, job))

    async def begin(self, run: RunRow, now: float, history: int) -> Begun | None:
        """Mark ``run`` (stored, or made now: a tick's) ``in_progress`` and give it the agent's
        queued messages (:func:`~agentloom.storage.managed_agents.take_queued`); ``None`` while
        another run of its agent is in progress."""
        return await self._runner.write(partial(_begin, run, now, history))

    async def get(self, agent_id: str, run_id: str) -> RunRow | None:
        return await self._runner.read(partial(_get, agent_id, run_id))

    async def find(self, run_id: str) -> RunRow | None:
        """The run, whichever agent of the project it is of."""
        return await self._runner.read(partial(_find, run_id))

    async def update(self, run_id: str, values: dict[str, Any]) -> RunRow | None:
        return await self._runner.write(partial(_update, run_id, values))

    async def page(
        self, agent_id: str, after: str | None, limit: int, order: Order
    ) -> Page[RunRow] | None:
        """``None`` when ``after`` is not one of the agent's runs."""
        read = partial(_page, agent_id, after, limit, order)
        return await self._runner.read(read)


def _row(row: Any) -> RunRow:
    return RunRow(*(getattr(row, c.name) for c in _COLUMNS))


def _lock_agent(agent_id: str, project: Project, conn: Connection) -> bool:
    """Lock the agent's row for the transaction (PostgreSQL; SQLite has one writer); whether
    it exists."""
    query = sa.select(A.c.id).where(project.rows(A, A.c.id == agent_id))
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return conn.scalar(query) is not None


def _others(project: Project, run: RunRow, statuses: tuple[str, ...]) -> sa.Select[Any]:
    return sa.select(R.c.id).where(
        project.rows(R, R.c.agent_id == run.agent_id, R.c.id != run.id, R.c.status.in_(statuses))
    )


def _queue(run: RunRow, job: JobRow, project: Project, conn: Connection) -> RunRow | None:
    if not _lock_agent(run.agent_id, project, conn):
        return None
    if conn.scalar(_others(project, run, ACTIVE).limit(1)) is not None:
        return None
    conn.execute(project.insert(R).values(**asdict(run)))
    enqueue(job, conn)
    return run


def _begin(
    run: RunRow, now: float, history: int, project: Project, conn: Connection
) -> Begun | None:
    if not _lock_agent(run.agent_id, project, conn):
        return None
    if conn.scalar(_others(project, run, ("in_progress",)).limit(1)) is not None:
        return None
    started = replace(run, status="in_progress", started_at=now)
    if _find(run.id, project, conn) is None:
        conn.execute(project.insert(R).values(**asdict(started)))
    else:
        values = {"status": "in_progress", "started_at": now}
        conn.execute(project.update(R, R.c.id == run.id).values(values))
    conn.execute(project.update(A, A.c.id == run.agent_id).values(status="running"))
    return Begun(started, take_queued(run.agent_id, run.id, history, project, conn))


def _get(agent_id: str, run_id: str, project: Project, conn: Connection) -> RunRow | None:
    mine = project.rows(R, R.c.id == run_id, R.c.agent_id == agent_id)
    mine = sa.and_(mine, *project.children_of(R.c.agent_id, A))
    row = conn.execute(sa.select(*_COLUMNS).where(mine)).first()
    return None if row is None else _row(row)


def _find(run_id: str, project: Project, conn: Connection) -> RunRow | None:
    mine = project.rows(R, R.c.id == run_id, *project.children_of(R.c.agent_id, A))
    row = conn.execute(sa.select(*_COLUMNS).where(mine)).first()
    return None if row is None else _row(row)


def _update(
    run_id: str, values: dict[str, Any], project: Project, conn: Connection
) -> RunRow | None:
    if values:
        conn.execute(project.update(R, R.c.id == run_id).values(**values))
    return _find(run_id, project, conn)


def _page(
    agent_id: str, after: str | None, limit: int, order: Order, project: Project, conn: Connection
) -> Page[RunRow] | None:
    owned = project.rows(R, R.c.agent_id == agent_id)
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(R.c.seq).where(owned, R.c.id == after))
        if cursor is None:
            return None
    query = sa.select(*_COLUMNS).where(owned)
    return keyset_page(conn, query, R.c.seq, order=order, limit=limit, row=_row, after=cursor)
