"""Durable jobs shared by every server process on the database.

A job is ``queued`` until a process claims it (``running``, ``claimed_by`` that process, a
lease it renews), then ``done``; a job of any ``kind`` (a background response, a webhook delivery,
a vector store file to ingest) is one row here. A queued job with ``run_after`` waits until then
(a delivery retried with backoff). A claim takes a job of one of the kinds the claiming process
has room for, fairly between projects: the oldest job of the project (and kind) with the fewest
jobs running, every process counted, and of those the one served least recently (``job_queues``),
so that one project's thousand queued jobs do not keep another's one waiting. It is one guarded
``UPDATE`` (``... WHERE status = 'queued'``), after ``FOR UPDATE SKIP LOCKED`` on PostgreSQL so
that claimers do not wait on each other: each job runs in one process at a time. A job whose
lease ran out belongs to a process that stopped: another one takes it over
(:meth:`SqlJobStore.expired`, :meth:`requeue`).

Enqueueing a background response writes its response row and its job in one transaction, and
notifies the processes listening (PostgreSQL) that there is work.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.base import ResponseRow
from agentloom.storage.notify import notify
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects
from agentloom.storage.upsert import insert

J = schema.jobs
Q = schema.job_queues
R = schema.responses
JOBS_CHANNEL = "agentloom_jobs"  # notified when a job is queued
CANCEL_CHANNEL = "agentloom_cancel"  # notified with a job's subject when it is to stop


@frozen
class JobRow:
    id: str
    project_id: str
    kind: str
    subject: str
    key_id: str | None
    payload: str
    status: str = "queued"
    attempts: int = 0
    cancel_requested: bool = False
    irreversible: bool = False
    created_at: float = 0.0
    run_after: float | None = None
    owner: str | None = None  # whose the objects it makes are (agentloom.access_rules)


_COLUMNS = tuple(J.c[name] for name in field_names(JobRow))


@frozen
class QueueStat:
    """The jobs of one kind in one status, and how long the oldest has existed."""

    kind: str
    status: str  # queued, running
    count: int
    oldest_age: float  # seconds


class SqlJobStore:
    """The jobs of every project: a job names its project (``JobRow.project_id``, set by who
    queues it), and the claimer and each job's process act on it by its id, across projects.
    Only the asks about a subject (:meth:`get`, :meth:`request_cancel`) are the running work's
    project's."""

    def __init__(self, runner: Runner) -> None:
        self._project = ProjectRunner(runner)
        self._runner = runner  # across projects

    async def enqueue_response(self, response: ResponseRow, job: JobRow) -> None:
        """Store a background response (queued, no items yet, owned by the running work's
        viewer) and its job together."""
        await self._runner.write(partial(_enqueue_response, response, job))

    async def enqueue(self, job: JobRow) -> None:
        await self._runner.write(partial(enqueue, job))

    async def claim(
        self, instance_id: str, *, now: float, lease: float, kinds: list[str]
    ) -> JobRow | None:
        """A queued job of one of ``kinds`` that is due, now this instance's (``None`` when there
        is none): the oldest of the project with the fewest jobs of its kind running."""
        if not kinds:
            return None
        return await self._runner.write(partial(_claim, instance_id, now, lease, kinds))

    async def renew(self, instance_id: str, job_ids: list[str], until: float) -> set[str]:
        """Extend this instance's leases; the ids it still holds."""
        if not job_ids:
            return set()
        return await self._runner.write(partial(_renew, instance_id, job_ids, until))

    async def finish(self, job_id: str, instance_id: str) -> None:
        await self._runner.write(partial(_finish, job_id, instance_id))

    async def retry_later(self, job_id: str, instance_id: str, at: float) -> None:
        """Queue a job this instance holds again, to run from ``at`` on (its attempts count
        afresh: they count takeovers, not retries the job asked for)."""
        await self._runner.write(partial(_retry_later, job_id, instance_id, at))

    async def mark_irreversible(self, job_id: str, instance_id: str) -> None:
        """The job did something that must not happen twice: a takeover fails it instead of
        running it again."""
        await self._runner.write_statement(partial(_mark_irreversible, job_id, instance_id))

    async def hand_back(self, job_id: str, instance_id: str) -> None:
        """Put a job this instance holds back in the queue (the instance is stopping)."""
        await self._runner.write(partial(_hand_back, job_id, instance_id))

    async def get(self, subject: str) -> JobRow | None:
        """The job of ``subject`` (in the running work's project)."""
        return await self._project.read(partial(_get, subject))

    async def request_cancel(self, subject: str) -> JobRow | None:
        """Ask the job of ``subject`` to stop: a queued one is done at once (returned with
        status ``cancelled``), a running one is flagged for its process (and notified)."""
        key = J.c.subject == subject
        return await self._project.write(partial(_request_cancel, key))

    async def request_cancel_job(self, job_id: str) -> JobRow | None:
        """:meth:`request_cancel` for the job ``job_id`` (a subject with several jobs)."""
        key = J.c.id == job_id
        return await self._project.write(partial(_request_cancel, key))

    async def cancelled(self, instance_id: str) -> list[str]:
        """Subjects of this instance's running jobs asked to stop."""
        return await self._runner.read(partial(_cancelled, instance_id))

    async def expired(self, now: float, limit: int = 100) -> list[JobRow]:
        """Running jobs whose lease ran out (their process stopped), of any project."""
        return await self._runner.read(partial(_expired, now, limit))

    async def requeue(self, job_id: str, *, lease_before: float) -> bool:
        """Queue an expired job again (unless another process already took it over)."""
        return await self._runner.write(partial(_requeue, job_id, lease_before))

    async def settle(self, job_id: str, *, lease_before: float) -> bool:
        """Mark an expired job done without running it again."""
        return await self._runner.write(partial(_settle, job_id, lease_before))

    async def queue_stats(self, now: float) -> list[QueueStat]:
        """Queued and running jobs of every project, by kind (what ``GET /metrics`` shows)."""
        return await self._runner.read(partial(_queue_stats, now))

    async def depth(self, kind: str) -> int:
        """Jobs of ``kind`` waiting to run."""
        return await self._runner.read(partial(_depth, kind))


def _row(row: Any) -> JobRow:
    return JobRow(*(getattr(row, c.name) for c in _COLUMNS))


def _enqueue_response(response: ResponseRow, job: JobRow, conn: Connection) -> None:
    conn.execute(
        R.insert().values(
            id=response.id,
            created_at=response.created_at,
            model=response.model,
            status=response.status,
            previous_response_id=response.previous_response_id,
            body=response.body,
            project_id=job.project_id,
            owner=job.owner,
        )
    )
    enqueue(job, conn)


def enqueue(job: JobRow, conn: Connection) -> None:
    """Queue ``job`` in the caller's transaction (the processes listening are told)."""
    conn.execute(J.insert().values(**asdict(job)))
    notify(conn, JOBS_CHANNEL)


FAIR_CANDIDATES = 16  # (kind, project) queues a claim tries, fairest first


def _claim(
    instance_id: str, now: float, lease: float, kinds: list[str], conn: Connection
) -> JobRow | None:
    for kind, project in conn.execute(across_projects(_fairest(kinds, now))).all():
        job_id = conn.scalar(across_projects(_oldest(kind, project, now, conn.dialect.name)))
        job = None if job_id is None else _take(job_id, instance_id, now, lease, conn)
        if job is not None:  # else other processes hold or took them just now: the next queue
            _served(kind, project, now, conn)
            return job
    return None


def _served(kind: str, project: str, now: float, conn: Connection) -> None:
    upsert = insert(conn, Q).values(kind=kind, project_id=project, served_at=now)
    key = [Q.c.kind, Q.c.project_id]
    served = upsert.on_conflict_do_update(index_elements=key, set_={"served_at": now})
    conn.execute(across_projects(served))


def _due(now: float) -> sa.ColumnElement[bool]:
    return sa.and_(J.c.status == "queued", sa.or_(J.c.run_after.is_(None), J.c.run_after <= now))


def _fairest(kinds: list[str], now: float) -> sa.Select[str, str]:
    """The queues (kind, project) with a job due: those with the fewest jobs running first, then
    the least recently served, then the longest waiting (ix_jobs_claim covers both groupings)."""
    waiting = (
        sa.select(J.c.kind, J.c.project_id, sa.func.min(J.c.seq).label("head"))
        .where(_due(now), J.c.kind.in_(kinds))
        .group_by(J.c.kind, J.c.project_id)
        .subquery()
    )
    busy = (
        sa.select(J.c.kind, J.c.project_id, sa.func.count().label("running"))
        .where(J.c.status == "running", J.c.kind.in_(kinds))
        .group_by(J.c.kind, J.c.project_id)
        .subquery()
    )
    return (
        sa.select(waiting.c.kind, waiting.c.project_id)
        .select_from(waiting.outerjoin(busy, _same(busy, waiting)).outerjoin(Q, _same(Q, waiting)))
        .order_by(
            sa.func.coalesce(busy.c.running, 0), sa.func.coalesce(Q.c.served_at, 0), waiting.c.head
        )
        .limit(FAIR_CANDIDATES)
    )


def _same(one: sa.FromClause, other: sa.FromClause) -> sa.ColumnElement[bool]:
    return sa.and_(one.c.kind == other.c.kind, one.c.project_id == other.c.project_id)


def _oldest(kind: str, project: str, now: float, dialect: str) -> sa.Select[str]:
    """The oldest due job of one queue that no other claimer holds."""
    query = (
        sa.select(J.c.id)
        .where(_due(now), J.c.kind == kind, J.c.project_id == project)
        .order_by(J.c.seq)
        .limit(1)
    )
    return query.with_for_update(skip_locked=True) if dialect == "postgresql" else query


def _take(
    job_id: str, instance_id: str, now: float, lease: float, conn: Connection
) -> JobRow | None:
    claimed = conn.execute(
        across_projects(J.update())
        .where(J.c.id == job_id, J.c.status == "queued")
        .values(
            status="running",
            claimed_by=instance_id,
            lease_until=now + lease,
            attempts=J.c.attempts + 1,
        )
        .returning(*_COLUMNS)
    ).first()
    return None if claimed is None else _row(claimed)


def _held(job_id: str, instance_id: str) -> sa.Update:
    """An update of the job, while this instance holds it (whichever project's it is)."""
    held = sa.and_(J.c.id == job_id, J.c.claimed_by == instance_id, J.c.status == "running")
    return across_projects(J.update()).where(held)


def _renew(instance_id: str, job_ids: list[str], until: float, conn: Connection) -> set[str]:
    held = sa.and_(J.c.id.in_(job_ids), J.c.claimed_by == instance_id, J.c.status == "running")
    renewed = across_projects(J.update()).where(held).values(lease_until=until)
    rows = conn.execute(renewed.returning(J.c.id))
    return {row.id for row in rows}


def _finish(job_id: str, instance_id: str, conn: Connection) -> None:
    conn.execute(_held(job_id, instance_id).values(status="done"))


def _retry_later(job_id: str, instance_id: str, at: float, conn: Connection) -> None:
    values = {"status": "queued", "claimed_by": None, "lease_until": None, "attempts": 0}
    conn.execute(_held(job_id, instance_id).values(run_after=at, **values))


def _mark_irreversible(job_id: str, instance_id: str, conn: Connection) -> None:
    conn.execute(_held(job_id, instance_id).values(irreversible=True))


def _hand_back(job_id: str, instance_id: str, conn: Connection) -> None:
    values = {"status": "queued", "claimed_by": None, "lease_until": None}
    conn.execute(_held(job_id, instance_id).values(**values))
    notify(conn, JOBS_CHANNEL)


def _get(subject: str, project: Project, conn: Connection) -> JobRow | None:
    return _found(project, J.c.subject == subject, conn)


def _request_cancel(
    key: sa.ColumnElement[bool], project: Project, conn: Connection
) -> JobRow | None:
    """Cancel the job ``key`` selects (by its subject or its id) in ``project``."""
    job = _found(project, key, conn)
    if job is None:
        return None
    if job.status == "queued":
        queued = project.update(J, J.c.id == job.id, J.c.status == "queued")
        if conn.execute(queued.values(status="done")).rowcount:
            return JobRow(**{**asdict(job), "status": "cancelled", "cancel_requested": True})
        job = _found(project, key, conn) or job  # claimed meanwhile: stop it running
    if job.status == "running":
        conn.execute(project.update(J, J.c.id == job.id).values(cancel_requested=True))
        notify(conn, CANCEL_CHANNEL, job.subject)
    return JobRow(**{**asdict(job), "cancel_requested": True})


def _found(project: Project, key: sa.ColumnElement[bool], conn: Connection) -> JobRow | None:
    row = conn.execute(sa.select(*_COLUMNS).where(project.rows(J, key))).first()
    return None if row is None else _row(row)


def _cancelled(instance_id: str, conn: Connection) -> list[str]:
    flagged = sa.and_(J.c.claimed_by == instance_id, J.c.status == "running", J.c.cancel_requested)
    return list(conn.scalars(across_projects(sa.select(J.c.subject).where(flagged))))


def _expired(now: float, limit: int, conn: Connection) -> list[JobRow]:
    late = sa.and_(J.c.status == "running", J.c.lease_until < now)
    query = across_projects(sa.select(*_COLUMNS).where(late).limit(limit))
    return [_row(r) for r in conn.execute(query)]


def _requeue(job_id: str, lease_before: float, conn: Connection) -> bool:
    late = sa.and_(J.c.id == job_id, J.c.status == "running", J.c.lease_until < lease_before)
    values = {"status": "queued", "claimed_by": None, "lease_until": None}
    requeued = conn.execute(across_projects(J.update()).where(late).values(**values)).rowcount > 0
    if requeued:
        notify(conn, JOBS_CHANNEL)
    return requeued


def _settle(job_id: str, lease_before: float, conn: Connection) -> bool:
    late = sa.and_(J.c.id == job_id, J.c.status == "running", J.c.lease_until < lease_before)
    return conn.execute(across_projects(J.update()).where(late).values(status="done")).rowcount > 0


def _queue_stats(now: float, conn: Connection) -> list[QueueStat]:
    live = J.c.status.in_(("queued", "running"))
    query = across_projects(
        sa.select(J.c.kind, J.c.status, sa.func.count(), sa.func.min(J.c.created_at))
        .where(live)
        .group_by(J.c.kind, J.c.status)
    )
    return [
        QueueStat(kind, status, int(count), max(0.0, now - float(oldest)))
        for kind, status, count, oldest in conn.execute(query)
    ]


def _depth(kind: str, conn: Connection) -> int:
    waiting = sa.and_(J.c.status == "queued", J.c.kind == kind)
    return int(conn.scalar(across_projects(sa.select(sa.func.count()).where(waiting))) or 0)
