"""Audit log entries: what administrators changed, when, and who did it (newest first)."""

from __future__ import annotations

from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects

A = schema.audit_logs


@frozen
class AuditRow:
    id: str
    type: str
    effective_at: float
    project_id: str | None
    actor_id: str
    body: str  # the entry as JSON
    actor_user_id: str | None = None


@frozen
class AuditQuery:
    after: str | None = None
    before: str | None = None
    limit: int = 20
    types: tuple[str, ...] = ()
    project_ids: tuple[str, ...] = ()
    actor_ids: tuple[str, ...] = ()
    since: float | None = None  # effective_at >= since
    until: float | None = None  # effective_at <= until


class SqlAuditStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def add(self, row: AuditRow) -> None:
        await self._runner.write_statement(partial(_add, row))

    async def list_page(self, query: AuditQuery) -> Page[AuditRow] | None:
        """``None`` when a cursor names no entry."""
        return await self._runner.read(partial(_list, query))


def _add(row: AuditRow, conn: Connection) -> None:
    conn.execute(  # the organization's log: an entry names its project, if it has one
        across_projects(A.insert()).values(
            id=row.id,
            type=row.type,
            effective_at=row.effective_at,
            project_id=row.project_id,
            actor_id=row.actor_id,
            actor_user_id=row.actor_user_id,
            body=row.body,
        )
    )


def _list(query: AuditQuery, conn: Connection) -> Page[AuditRow] | None:
    columns = (A.c.id, A.c.type, A.c.effective_at, A.c.project_id, A.c.actor_id, A.c.body)
    select = across_projects(sa.select(*columns))
    if query.types:
        select = select.where(A.c.type.in_(query.types))
    if query.project_ids:
        select = select.where(A.c.project_id.in_(query.project_ids))
    if query.actor_ids:
        ids = query.actor_ids  # a key's, or a user's (any of their keys)
        select = select.where(sa.or_(A.c.actor_id.in_(ids), A.c.actor_user_id.in_(ids)))
    if query.since is not None:
        select = select.where(A.c.effective_at >= query.since)
    if query.until is not None:
        select = select.where(A.c.effective_at <= query.until)
    cursors = []
    for given in (query.after, query.before):
        seq = None if given is None else conn.scalar(_seq_of(given))
        if given is not None and seq is None:
            return None
        cursors.append(None if seq is None else int(seq))
    return keyset_page(
        conn,
        select,
        A.c.seq,
        order="desc",
        limit=query.limit,
        row=_row,
        after=cursors[0],
        before=cursors[1],
    )


def _seq_of(entry_id: str) -> sa.Select[Any]:
    return across_projects(sa.select(A.c.seq).where(A.c.id == entry_id))


def _row(row: Any) -> AuditRow:
    return AuditRow(row.id, row.type, row.effective_at, row.project_id, row.actor_id, row.body)
