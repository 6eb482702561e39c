"""The file store: one row per uploaded file (its bytes are in the blob store).

A file past its ``expires_at`` is gone for every read (``now`` is passed in, so one clock
decides); housekeeping deletes such rows with :meth:`SqlFileStore.expired` then ``delete``.
Pages are keyset-paginated on ``seq``, so files created in the same second keep their order.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Owned, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects

F = schema.files
_COLUMNS = (
    F.c.id,
    F.c.created_at,
    F.c.filename,
    F.c.purpose,
    F.c.bytes,
    F.c.content_type,
    F.c.sha256,
    F.c.expires_at,
    F.c.blob_key,
)


@frozen
class FileRow:
    id: str
    created_at: float  # unix seconds
    filename: str  # sanitised
    purpose: str
    bytes: int
    content_type: str  # sniffed from the bytes
    sha256: str  # hex
    expires_at: float | None
    blob_key: str


@frozen
class FileQuery:
    purpose: str | None = None
    after: str | None = None
    limit: int = 10_000
    order: Order = "desc"


class FileStore(Protocol):
    async def insert(self, row: FileRow) -> None: ...

    async def get(self, file_id: str, *, now: float) -> FileRow | None:
        """The file, unless it does not exist or expired before ``now``."""

    async def list_page(self, query: FileQuery, *, now: float) -> Page[FileRow] | None:
        """Unexpired files by creation; ``None`` when the ``after`` file does not exist."""

    async def delete(self, file_id: str) -> FileRow | None:
        """Delete the row and return it; ``None`` when there was none."""

    async def expired(self, *, now: float, limit: int) -> list[Owned]:
        """Up to ``limit`` files of any project whose ``expires_at`` is before ``now``, oldest
        expiry first."""


class SqlFileStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def insert(self, row: FileRow) -> None:
        await self._runner.write_statement(partial(_insert, row))

    async def get(self, file_id: str, *, now: float) -> FileRow | None:
        return await self._runner.read(partial(_get, file_id, now))

    async def list_page(self, query: FileQuery, *, now: float) -> Page[FileRow] | None:
        return await self._runner.read(partial(_list, query, now))

    async def delete(self, file_id: str) -> FileRow | None:
        return await self._runner.write(partial(_delete, file_id))

    async def expired(self, *, now: float, limit: int) -> list[Owned]:
        return await self._runner.across_projects.read(partial(_expired, now, limit))


# --- operations ------------------------------------------------------------------------------


def _live(now: float) -> sa.ColumnElement[bool]:
    return sa.or_(F.c.expires_at.is_(None), F.c.expires_at > now)


def _insert(row: FileRow, project: Project, conn: Connection) -> None:
    values = {c.name: getattr(row, c.name) for c in _COLUMNS}
    conn.execute(project.insert(F).values(**values))


def _mine(project: Project, file_id: str) -> sa.ColumnElement[bool]:
    return project.rows(F, F.c.id == file_id)


def _get(file_id: str, now: float, project: Project, conn: Connection) -> FileRow | None:
    row = conn.execute(sa.select(*_COLUMNS).where(_mine(project, file_id), _live(now))).first()
    return None if row is None else _row(row)


def _list(query: FileQuery, now: float, project: Project, conn: Connection) -> Page[FileRow] | None:
    select = sa.select(*_COLUMNS).where(project.rows(F, _live(now)))
    if query.purpose is not None:
        select = select.where(F.c.purpose == query.purpose)
    cursor = None
    if query.after is not None:
        cursor = conn.scalar(sa.select(F.c.seq).where(_mine(project, query.after)))
        if cursor is None:
            return None
    return keyset_page(
        conn, select, F.c.seq, order=query.order, limit=query.limit, row=_row, after=cursor
    )


def _delete(file_id: str, project: Project, conn: Connection) -> FileRow | None:
    row = conn.execute(sa.select(*_COLUMNS).where(_mine(project, file_id))).first()
    if row is None:
        return None
    deleted = conn.execute(project.delete(F, F.c.id == file_id))
    return _row(row) if deleted.rowcount else None


def _expired(now: float, limit: int, conn: Connection) -> list[Owned]:
    select = across_projects(
        sa.select(F.c.project_id, F.c.id)
        .where(F.c.expires_at.is_not(None), F.c.expires_at <= now)
        .order_by(F.c.expires_at)
        .limit(limit)
    )
    return [Owned(r.project_id, r.id) for r in conn.execute(select)]


def _row(row: Any) -> FileRow:
    return FileRow(
        id=row.id,
        created_at=row.created_at,
        filename=row.filename,
        purpose=row.purpose,
        bytes=int(row.bytes),
        content_type=row.content_type,
        sha256=row.sha256,
        expires_at=row.expires_at,
        blob_key=row.blob_key,
    )
