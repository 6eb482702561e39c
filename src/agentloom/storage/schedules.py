"""Schedules: recurring work, turned into jobs exactly once whichever processes look.

Every job runner looks for due schedules about once a second (:meth:`SqlScheduleStore.fire`).
Firing a schedule is one transaction: the due row (``FOR UPDATE SKIP LOCKED`` on PostgreSQL;
SQLite has one writer) gets its next time, and its job is queued with it, so two processes
looking at once fire it once. A schedule whose last job is still queued or running is not fired
(runs never overlap: a long run delays the next one). A schedule that was due several times
while no server ran fires once, then goes on from now.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.cron import Cron
from agentloom.frozen import field_names, frozen
from agentloom.ids import new_id
from agentloom.storage import schema
from agentloom.storage.jobs import JobRow, enqueue
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects

S = schema.schedules
J = schema.jobs


@frozen
class ScheduleRow:
    id: str
    kind: str  # of the jobs it queues
    subject: str
    payload: str
    next_run_at: float
    created_at: float
    every: float | None = None
    cron: str | None = None
    paused: bool = False
    last_job_id: str | None = None
    runs: int = 0

    def following(self, moment: float) -> float:
        """When it runs next after a run at ``moment``."""
        if self.cron is not None:
            return Cron.parse(self.cron).after(moment)
        return moment + (self.every or 0.0)


_COLUMNS = tuple(S.c[name] for name in field_names(ScheduleRow))


class SqlScheduleStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: ScheduleRow) -> None:
        await self._runner.write(partial(insert, row))

    async def get(self, schedule_id: str) -> ScheduleRow | None:
        return await self._runner.read(partial(_get, schedule_id))

    async def update(self, schedule_id: str, values: dict[str, Any]) -> ScheduleRow | None:
        write = partial(_update, schedule_id, values)
        return await self._runner.write(write)

    async def delete(self, schedule_id: str) -> bool:
        return await self._runner.write(partial(_delete, schedule_id))

    async def fire(self, now: float, limit: int = 100) -> int:
        """Queue the job of every due schedule (of any project) whose last one ended; how many
        were queued. A read finds out first whether any is due (no write a second for none)."""
        if not await self._runner.across_projects.read(partial(_any_due, now)):
            return 0
        return await self._runner.across_projects.write(partial(_fire, now, limit))


def _row(row: Any) -> ScheduleRow:
    return ScheduleRow(*(getattr(row, c.name) for c in _COLUMNS))


def _mine(project: Project, schedule_id: str) -> sa.ColumnElement[bool]:
    return project.rows(S, S.c.id == schedule_id)


def insert(row: ScheduleRow, project: Project, conn: Connection) -> None:
    """Store ``row`` in the caller's transaction (with what it schedules, say)."""
    conn.execute(project.insert(S).values(**asdict(row)))


def _get(schedule_id: str, project: Project, conn: Connection) -> ScheduleRow | None:
    row = conn.execute(sa.select(*_COLUMNS).where(_mine(project, schedule_id))).first()
    return None if row is None else _row(row)


def _update(
    schedule_id: str, values: dict[str, Any], project: Project, conn: Connection
) -> ScheduleRow | None:
    if values:
        conn.execute(project.update(S, S.c.id == schedule_id).values(**values))
    return _get(schedule_id, project, conn)


def _delete(schedule_id: str, project: Project, conn: Connection) -> bool:
    return conn.execute(project.delete(S, S.c.id == schedule_id)).rowcount > 0


def _due(now: float) -> sa.ColumnElement[bool]:
    busy = sa.select(J.c.id).where(J.c.id == S.c.last_job_id, J.c.status != "done").exists()
    return sa.and_(S.c.next_run_at <= now, sa.not_(S.c.paused), sa.not_(busy))


def _any_due(now: float, conn: Connection) -> bool:
    return conn.scalar(across_projects(sa.select(S.c.id).where(_due(now)).limit(1))) is not None


def _fire(now: float, limit: int, conn: Connection) -> int:
    query = across_projects(sa.select(*_COLUMNS, S.c.project_id).where(_due(now)))
    query = query.order_by(S.c.next_run_at).limit(limit)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(of=S, skip_locked=True)
    fired = 0
    for found in conn.execute(query).all():
        schedule = _row(found)
        job = JobRow(
            id=new_id("job"),
            project_id=found.project_id,
            kind=schedule.kind,
            subject=schedule.subject,
            key_id=None,
            payload=schedule.payload,
            created_at=time.time(),
        )
        moved = conn.execute(
            Project(found.project_id)
            .update(S, S.c.id == schedule.id, S.c.next_run_at == schedule.next_run_at)
            .values(
                next_run_at=_next(schedule, now),
                last_job_id=job.id,
                runs=S.c.runs + 1,
            )
        )
        if moved.rowcount:
            enqueue(job, conn)
            fired += 1
    return fired


def _next(schedule: ScheduleRow, now: float) -> float:
    """The time after this run: on the schedule's own beat, unless that time has passed too (a
    schedule due long ago does not catch up run by run)."""
    upcoming = schedule.following(schedule.next_run_at)
    return upcoming if upcoming > now else schedule.following(now)
