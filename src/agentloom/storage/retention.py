"""Retention: deleting rows that ended longer ago than their kind is kept, a batch at a time.

Each kind (:data:`KINDS`) says which rows may go (they ended: a response or job still queued or
running, a delivery still pending, is never deleted), how old a row is, and what else goes with
it: a stored response takes its items (input and output), as ``DELETE /v1/responses/{id}``
does, and its stream events. A batch is one short transaction: the keys of at most
``limit`` rows, then those rows deleted, so that no statement holds locks for long. Rows of
every project are swept with the server's ages, but a project with its own age for its
responses (``projects.response_retention``) has those swept with that age instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.events import TERMINAL_EVENTS
from agentloom.storage.responses import delete_responses
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects
from agentloom.storage.upsert import insert
from agentloom.tenancy import DEFAULT_PROJECT

P = schema.projects
S = schema.schedules
SWEEP_JOB = "retention"  # the kind of the sweep's jobs
SWEEP_SCHEDULE = "sched_retention"  # the one schedule that queues them
R = schema.responses
E = schema.response_events
J = schema.jobs
D = schema.webhook_deliveries
A = schema.audit_logs
Q = schema.request_log
_LIVE_RESPONSES = ("queued", "in_progress")


@frozen
class Kind:
    """A kind of row retention deletes: which keys a batch of old ones has, and how they go."""

    name: str  # the ``[retention]`` field
    keys: Callable[[float], sa.Select[Any]]  # the keys of the rows older than a cutoff
    project: sa.ColumnElement[str | None]  # the rows' project
    delete: Callable[[Sequence[Any], Connection], int]  # rows deleted


@frozen
class Scope:
    """Whose rows a sweep deletes: one project's, or every project's but ``skip``'s."""

    only: str | None = None
    skip: tuple[str, ...] = ()

    def where(self, column: sa.ColumnElement[str | None]) -> sa.ColumnElement[bool]:
        if self.only is not None:
            return column == self.only
        return column.not_in(self.skip) if self.skip else sa.true()


def _seq_keys(
    table: sa.Table, age: sa.ColumnElement[float], ended: sa.ColumnElement[bool]
) -> Callable[[float], sa.Select[Any]]:
    def keys(cutoff: float) -> sa.Select[Any]:
        return sa.select(table.c.seq).where(ended, age < cutoff).order_by(table.c.seq)

    return keys


def _delete_seqs(table: sa.Table) -> Callable[[Sequence[Any], Connection], int]:
    def delete(seqs: Sequence[Any], conn: Connection) -> int:
        return conn.execute(across_projects(table.delete()).where(table.c.seq.in_(seqs))).rowcount

    return delete


def _response_keys(cutoff: float) -> sa.Select[Any]:
    query = sa.select(R.c.id).where(R.c.status.not_in(_LIVE_RESPONSES), R.c.created_at < cutoff)
    return query.order_by(R.c.seq)


def _event_keys(cutoff: float) -> sa.Select[Any]:
    """Events of responses that ended and were created before ``cutoff``, but their terminal
    event: a replay of the stream then gives the final response at once (it goes with the
    response). The events of a managed agent's runs are the agent's: they go with it."""
    ended = sa.and_(R.c.status.not_in(_LIVE_RESPONSES), R.c.created_at < cutoff)
    query = sa.select(E.c.response_id, E.c.sequence_number).join(R, R.c.id == E.c.response_id)
    query = query.where(ended, E.c.type.not_in(TERMINAL_EVENTS))
    return query.order_by(E.c.response_id, E.c.sequence_number)


def _delete_events(keys: Sequence[Any], conn: Connection) -> int:
    pairs = [(row[0], row[1]) for row in keys]
    key = sa.tuple_(E.c.response_id, E.c.sequence_number)
    return conn.execute(across_projects(E.delete()).where(key.in_(pairs))).rowcount


RESPONSES = Kind("responses", _response_keys, R.c.project_id, delete_responses)
KINDS: tuple[Kind, ...] = (
    RESPONSES,
    Kind("response_events", _event_keys, E.c.project_id, _delete_events),
    Kind(
        "jobs",
        _seq_keys(J, J.c.created_at, J.c.status == "done"),
        J.c.project_id,
        _delete_seqs(J),
    ),
    Kind(
        "webhook_deliveries",
        _seq_keys(D, D.c.created_at, D.c.status != "pending"),
        D.c.project_id,
        _delete_seqs(D),
    ),
    Kind("audit_logs", _seq_keys(A, A.c.effective_at, sa.true()), A.c.project_id, _delete_seqs(A)),
    Kind("request_log", _seq_keys(Q, Q.c.created_at, sa.true()), Q.c.project_id, _delete_seqs(Q)),
)


class SqlRetentionStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def sweep_batch(
        self,
        kind: Kind,
        cutoff: float,
        limit: int,
        scope: Scope = Scope(),  # noqa: B008 - frozen
    ) -> int:
        """Delete at most ``limit`` rows of ``kind`` older than ``cutoff`` (in ``scope``); how
        many went (fewer than ``limit``: none are left)."""
        return await self._runner.write(partial(_sweep_batch, kind, cutoff, limit, scope))

    async def schedule(self, every: float, now: float) -> None:
        """Have the sweep queued every ``every`` seconds, the first time ``every`` from now:
        one schedule whichever processes start (:mod:`agentloom.storage.schedules` fires it
        once across them); a start with another ``every`` changes it."""
        await self._runner.write(partial(_schedule, every, now))

    async def project_ages(self) -> dict[str, float]:
        """The projects with their own age for their responses (``response_retention``)."""
        return await self._runner.read(_project_ages)


def _sweep_batch(kind: Kind, cutoff: float, limit: int, scope: Scope, conn: Connection) -> int:
    query = across_projects(kind.keys(cutoff)).where(scope.where(kind.project)).limit(limit)
    keys = conn.execute(query).all()
    if not keys:
        return 0
    single = [row[0] for row in keys] if len(keys[0]) == 1 else keys
    kind.delete(single, conn)
    return len(keys)


def _project_ages(conn: Connection) -> dict[str, float]:
    query = sa.select(P.c.id, P.c.response_retention).where(P.c.response_retention.is_not(None))
    return {row.id: float(row.response_retention) for row in conn.execute(query)}


def _schedule(every: float, now: float, conn: Connection) -> None:
    row = across_projects(insert(conn, S)).values(
        id=SWEEP_SCHEDULE,
        project_id=DEFAULT_PROJECT,
        kind=SWEEP_JOB,
        subject=SWEEP_JOB,
        payload="{}",
        every=every,
        next_run_at=now + every,
        created_at=now,
    )
    changed = S.c.every != every
    update = {"every": every, "next_run_at": now + every}
    conn.execute(row.on_conflict_do_update(index_elements=[S.c.id], set_=update, where=changed))
