"""The Batch API's store: a project's batches, and the result of each of their requests.

(``storage/batches.py`` is something else: the group commit of the hot path's statements.)

A request's result is written once, by its line in the input file, in one transaction with the
batch's counts and token usage (:meth:`SqlBatchStore.record`): a batch run again after its
process stopped runs the lines without a result and counts each request once.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.access_rules import Action
from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.base import Page
from agentloom.storage.jobs import JobRow, enqueue
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

B = schema.batches
R = schema.batch_results
J = schema.jobs
BATCH_JOB = "batch"  # the kind of the jobs that run batches


@frozen
class BatchRow:
    id: str
    created_at: float
    endpoint: str
    input_file_id: str
    completion_window: str
    status: str
    expires_at: float
    metadata: str | None = None  # a JSON object
    output_expires_after: int | None = None
    model: str | None = None
    errors: str | None = None  # a JSON list of errors
    output_file_id: str | None = None
    error_file_id: str | None = None
    in_progress_at: float | None = None
    finalizing_at: float | None = None
    completed_at: float | None = None
    failed_at: float | None = None
    expired_at: float | None = None
    cancelling_at: float | None = None
    cancelled_at: float | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0


@frozen
class Tokens:
    """What one request used."""

    input: int = 0
    cached: int = 0
    output: int = 0
    reasoning: int = 0


@frozen
class Result:
    line: int
    failed: bool
    body: str  # the output line, JSON


_COLUMNS = tuple(B.c[name] for name in field_names(BatchRow))


class SqlBatchStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: BatchRow, job: JobRow) -> None:
        """Store a batch and queue the job that runs it, together."""
        await self._runner.write(partial(_create, row, job))

    async def get(self, batch_id: str, action: Action = "read") -> BatchRow | None:
        """The batch, if the access rules let the viewer ``action`` it."""
        return await self._runner.read(partial(_get, batch_id, action))

    async def list_page(self, after: str | None, limit: int) -> Page[BatchRow] | None:
        """Newest first; ``None`` when ``after`` is not one of the project's batches."""
        return await self._runner.read(partial(_list, after, limit))

    async def update(
        self, batch_id: str, values: dict[str, Any], *, statuses: frozenset[str]
    ) -> BatchRow | None:
        """Set ``values`` on the batch if its status is one of ``statuses``; the batch then
        (``None``: it was in another status, or is not there)."""
        return await self._runner.write(partial(_update, batch_id, values, statuses))

    async def record(self, batch_id: str, result: Result, tokens: Tokens) -> bool:
        """Keep a request's result and count it (with its tokens), unless it has one already;
        whether it was new."""
        return await self._runner.write(partial(_record, batch_id, result, tokens))

    async def ended_lines(self, batch_id: str) -> set[int]:
        """The lines of the batch whose request has a result."""
        return await self._runner.read(partial(_ended_lines, batch_id))

    async def results(self, batch_id: str) -> list[Result]:
        """The batch's results, by line."""
        return await self._runner.read(partial(_results, batch_id))

    async def ahead(self, job_id: str, kind: str) -> int:
        """How many of the project's batch jobs (of ``kind``) running in any process go before
        the job ``job_id``."""
        return await self._runner.read(partial(_ahead, job_id, kind))


def _row(row: Any) -> BatchRow:
    return BatchRow(*(getattr(row, c.name) for c in _COLUMNS))


def _create(row: BatchRow, job: JobRow, project: Project, conn: Connection) -> None:
    conn.execute(project.insert(B).values(**asdict(row)))
    enqueue(job, conn)


def _get(batch_id: str, action: Action, project: Project, conn: Connection) -> BatchRow | None:
    mine = sa.select(*_COLUMNS).where(B.c.project_id == project.id, B.c.id == batch_id)
    row = conn.execute(project.visible(mine, B, action)).first()
    return None if row is None else _row(row)


def _list(
    after: str | None, limit: int, project: Project, conn: Connection
) -> Page[BatchRow] | None:
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(B.c.seq).where(project.rows(B, B.c.id == after)))
        if cursor is None:
            return None
    query = sa.select(*_COLUMNS).where(project.rows(B))
    return keyset_page(conn, query, B.c.seq, order="desc", limit=limit, row=_row, after=cursor)


def _update(
    batch_id: str,
    values: dict[str, Any],
    statuses: frozenset[str],
    project: Project,
    conn: Connection,
) -> BatchRow | None:
    changed = project.update(B, B.c.id == batch_id, B.c.status.in_(statuses)).values(**values)
    if conn.execute(changed).rowcount == 0:
        return None
    return _get(batch_id, "read", project, conn)


def _record(
    batch_id: str, result: Result, tokens: Tokens, project: Project, conn: Connection
) -> bool:
    known = sa.select(R.c.line).where(
        project.rows(R, R.c.batch_id == batch_id, R.c.line == result.line)
    )
    if conn.execute(known).first() is not None:
        return False
    conn.execute(
        project.insert(R).values(
            batch_id=batch_id, line=result.line, failed=result.failed, body=result.body
        )
    )
    counted = B.c.failed if result.failed else B.c.completed
    conn.execute(
        project.update(B, B.c.id == batch_id).values(
            {
                counted: counted + 1,
                B.c.input_tokens: B.c.input_tokens + tokens.input,
                B.c.cached_tokens: B.c.cached_tokens + tokens.cached,
                B.c.output_tokens: B.c.output_tokens + tokens.output,
                B.c.reasoning_tokens: B.c.reasoning_tokens + tokens.reasoning,
            }
        )
    )
    return True


def _ended_lines(batch_id: str, project: Project, conn: Connection) -> set[int]:
    query = sa.select(R.c.line).where(project.rows(R, R.c.batch_id == batch_id))
    return set(conn.scalars(query))


def _results(batch_id: str, project: Project, conn: Connection) -> list[Result]:
    query = sa.select(R.c.line, R.c.failed, R.c.body).where(
        project.rows(R, R.c.batch_id == batch_id)
    )
    return [Result(r.line, bool(r.failed), r.body) for r in conn.execute(query.order_by(R.c.line))]


def _ahead(job_id: str, kind: str, project: Project, conn: Connection) -> int:
    """The project's running jobs of ``kind`` queued before ``job_id``, and those queued after
    it whose batch started already: the oldest job never waits for a younger one that has not
    started (two claimed at once do not both step back), nor does one run beside a younger one
    that did."""
    mine = sa.select(J.c.seq).where(project.rows(J, J.c.id == job_id)).scalar_subquery()
    started = sa.select(B.c.id).where(project.rows(B, B.c.status != "validating"))
    others = project.rows(J, J.c.kind == kind, J.c.status == "running", J.c.id != job_id)
    first = sa.or_(J.c.seq < mine, J.c.subject.in_(started))
    query = sa.select(sa.func.count()).select_from(J).where(others, first)
    return int(conn.scalar(query) or 0)
