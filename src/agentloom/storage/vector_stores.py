"""The vector store store: stores, their files and file batches (SQLAlchemy Core, the same on
SQLite and PostgreSQL). Chunks, ingestion claims and search reads are in
:mod:`agentloom.storage.vector_chunks`.

Locking: every write that changes a store's files or chunks first locks the store's row
(``FOR UPDATE`` on PostgreSQL; SQLite has one writer anyway), then touches file rows. One lock
order for every writer means no deadlock, and it orders the chunk writes of one store: a chunk
with a higher ``seq`` is never committed before one with a lower ``seq`` (in-memory indexes rely
on that to load new chunks by ``seq``).

A file waiting to be ingested has a job (:func:`queue_ingestion`), queued in the transaction
that attaches it: whichever server process claims the job ingests the file.

File counts are not stored: one ``GROUP BY`` over the files' statuses gives them, exact.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.access_rules import Action
from agentloom.errors import NotFoundError
from agentloom.ids import new_id
from agentloom.storage import schema
from agentloom.storage.base import Owned, Page
from agentloom.storage.jobs import JobRow, enqueue
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects, in_project
from agentloom.storage.upsert import insert as upsert
from agentloom.storage.vector_stores_base import (
    BatchRow,
    BatchState,
    Cursor,
    FileCounts,
    FileStatus,
    StoreChanges,
    StoreFileRow,
    StoreRow,
    StoreState,
)

VS = schema.vector_stores
VF = schema.vector_store_files
J = schema.jobs
INGEST_JOB = "ingest"  # the kind of the jobs that ingest a file
VB = schema.vector_store_file_batches
VC = schema.vector_store_chunks

_STORE_COLUMNS = (
    VS.c.id,
    VS.c.created_at,
    VS.c.name,
    VS.c.metadata,
    VS.c.expires_after,
    VS.c.expires_at,
    VS.c.last_active_at,
    VS.c.embedder,
    VS.c.dimensions,
    VS.c.epoch,
)
_FILE_COLUMNS = (
    VF.c.vector_store_id,
    VF.c.file_id,
    VF.c.created_at,
    VF.c.status,
    VF.c.attributes,
    VF.c.chunking_strategy,
    VF.c.batch_id,
    VF.c.last_error,
    VF.c.usage_bytes,
    VF.c.chunks_total,
    VF.c.chunks_embedded,
)
_BATCH_COLUMNS = (VB.c.id, VB.c.vector_store_id, VB.c.created_at, VB.c.cancelled)
_SID: sa.BindParameter[str] = sa.bindparam("sid")
_MINE = sa.and_(VS.c.id == _SID, in_project(VS))
_GET_STORE = sa.select(*_STORE_COLUMNS).where(_MINE)
_OWNS = sa.select(VS.c.id).where(_MINE)
_LOCK_MINE = _OWNS.with_for_update()
_STORE_SEQ = sa.select(VS.c.seq).where(_MINE)
_COUNTS = sa.select(
    VF.c.status,
    sa.func.count().label("n"),
    sa.func.sum(VF.c.usage_bytes).label("usage"),
    sa.func.sum(VF.c.chunks_total).label("chunks"),
    sa.func.sum(VF.c.chunks_embedded).label("embedded"),
).group_by(VF.c.status)

T = TypeVar("T")


class SqlVectorStoreStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: StoreRow, files: Sequence[StoreFileRow]) -> None:
        await self._runner.write(partial(_create, row, files))

    async def get(self, store_id: str) -> StoreState | None:
        return await self._runner.read(partial(_get, store_id))

    async def list_page(self, cursor: Cursor) -> Page[StoreState]:
        return await self._runner.read(partial(_list, cursor))

    async def recently_active(self, *, now: float, limit: int) -> list[Owned]:
        """The stores of any project used most recently (not expired), most recent first."""
        return await self._runner.across_projects.read(partial(_recently_active, now, limit))

    async def update(self, store_id: str, changes: StoreChanges) -> StoreState | None:
        return await self._runner.write(partial(_update, store_id, changes))

    async def touch(self, store_id: str, *, now: float, expires_at: float | None) -> None:
        """Mark the store used at ``now`` and set its expiry (unless a later use did)."""
        await self._runner.write_statement(partial(_touch, store_id, now, expires_at))

    async def delete(self, store_id: str) -> bool:
        """Delete the store with its files, batches and chunks."""
        return await self._runner.write(partial(_delete, store_id))

    async def add_files(
        self, store_id: str, rows: Sequence[StoreFileRow], batch: BatchRow | None = None
    ) -> list[StoreFileRow] | None:
        """Attach files (a file already in the store stays as it is, unless it failed or was
        cancelled: then it is ingested again; with ``batch`` it joins that batch). The rows of
        every named file, in order; ``None`` if there is no store."""
        return await self._runner.write(partial(_add_files, store_id, rows, batch))

    async def get_file(self, store_id: str, file_id: str) -> StoreFileRow | None:
        return await self._runner.read(partial(_get_file, store_id, file_id))

    async def list_files(
        self,
        store_id: str,
        cursor: Cursor,
        *,
        status: FileStatus | None = None,
        batch_id: str | None = None,
    ) -> Page[StoreFileRow]:
        return await self._runner.read(partial(_list_files, store_id, cursor, status, batch_id))

    async def set_attributes(
        self, store_id: str, file_id: str, attributes: str
    ) -> StoreFileRow | None:
        return await self._runner.write(partial(_set_attributes, store_id, file_id, attributes))

    async def get_batch(self, store_id: str, batch_id: str) -> BatchState | None:
        return await self._runner.read(partial(_get_batch, store_id, batch_id))

    async def cancel_batch(self, store_id: str, batch_id: str) -> BatchState | None:
        """Mark the batch cancelled and cancel its files still in progress (whatever their
        ingestion computes is then dropped)."""
        return await self._runner.write(partial(_cancel_batch, store_id, batch_id))


# --- stores ----------------------------------------------------------------------------------


def _create(
    row: StoreRow, files: Sequence[StoreFileRow], project: Project, conn: Connection
) -> None:
    conn.execute(project.insert(VS).values(**asdict(row)))
    if files:
        conn.execute(VF.insert(), [asdict(f) for f in files])
        waiting = [f.file_id for f in files if f.status == "in_progress"]
        queue_ingestion(conn, project, row.id, waiting)


def _recently_active(now: float, limit: int, conn: Connection) -> list[Owned]:
    live = sa.or_(VS.c.expires_at.is_(None), VS.c.expires_at > now)
    query = across_projects(sa.select(VS.c.project_id, VS.c.id).where(live))
    rows = conn.execute(query.order_by(VS.c.last_active_at.desc()).limit(limit))
    return [Owned(row.project_id, row.id) for row in rows]


def _get(store_id: str, project: Project, conn: Connection) -> StoreState | None:
    row = conn.execute(project.visible(_GET_STORE, VS), project.params(sid=store_id)).first()
    if row is None:
        return None
    store = store_row(row)
    return StoreState(store, _counts(conn, VF.c.vector_store_id == store_id))


def _list(cursor: Cursor, project: Project, conn: Connection) -> Page[StoreState]:
    query = sa.select(*_STORE_COLUMNS).where(project.rows(VS))
    seq = project.visible(_STORE_SEQ, VS).params(project=project.id)
    page = _page(conn, query, VS.c.seq, cursor, (seq, "sid"), store_row)
    counts = _counts_by_store(conn, [s.id for s in page.data])
    states = [StoreState(s, counts.get(s.id, FileCounts())) for s in page.data]
    return Page(states, page.has_more)


def _update(
    store_id: str, changes: StoreChanges, project: Project, conn: Connection
) -> StoreState | None:
    updated = conn.execute(project.update(VS, VS.c.id == store_id).values(**asdict(changes)))
    return _get(store_id, project, conn) if updated.rowcount else None


def _touch(
    store_id: str, now: float, expires_at: float | None, project: Project, conn: Connection
) -> None:
    stale = project.update(VS, VS.c.id == store_id, VS.c.last_active_at < now)
    conn.execute(stale.values(last_active_at=now, expires_at=expires_at))


def _delete(store_id: str, project: Project, conn: Connection) -> bool:
    if not lock_store(conn, store_id, project, "delete"):
        return False
    for table in (VC, VF, VB):
        conn.execute(table.delete().where(table.c.vector_store_id == store_id))
    conn.execute(project.delete(VS, VS.c.id == store_id))
    return True


# --- files -----------------------------------------------------------------------------------


def _add_files(
    store_id: str,
    rows: Sequence[StoreFileRow],
    batch: BatchRow | None,
    project: Project,
    conn: Connection,
) -> list[StoreFileRow] | None:
    if not lock_store(conn, store_id, project):
        return None
    if batch is not None:
        conn.execute(VB.insert().values(**asdict(batch)))
    if rows:
        insert = upsert(conn, VF)
        keys = [VF.c.vector_store_id, VF.c.file_id]
        conn.execute(insert.on_conflict_do_nothing(index_elements=keys), [asdict(r) for r in rows])
        conn.execute(_RETRY, [_retry_values(r) for r in rows])
    file_ids = [r.file_id for r in rows]
    named = sa.and_(VF.c.vector_store_id == store_id, VF.c.file_id.in_(file_ids))
    if batch is not None:
        conn.execute(VF.update().where(named).values(batch_id=batch.id))
    found = {r.file_id: _file_row(r) for r in conn.execute(sa.select(*_FILE_COLUMNS).where(named))}
    waiting = [f.file_id for f in found.values() if f.status == "in_progress"]
    queue_ingestion(conn, project, store_id, waiting)
    return [found[file_id] for file_id in file_ids if file_id in found]


def queue_ingestion(conn: Connection, project: Project, store_id: str, file_ids: list[str]) -> None:
    """A job to ingest each of these files of the store that nobody is ingesting (unclaimed)
    and that has no job queued. (A file attached again after it failed or was cancelled is
    unclaimed: a job still running on it as it was before loses its claim.)"""
    unclaimed = sa.and_(
        VF.c.vector_store_id == store_id, VF.c.file_id.in_(file_ids), VF.c.claimed_by.is_(None)
    )
    file_ids = list(conn.scalars(sa.select(VF.c.file_id).where(unclaimed)))
    if not file_ids:
        return
    subjects = {ingestion_subject(store_id, file_id) for file_id in file_ids}
    active = project.rows(
        J, J.c.subject.in_(subjects), J.c.kind == INGEST_JOB, J.c.status == "queued"
    )
    subjects -= set(conn.scalars(sa.select(J.c.subject).where(active)))
    now, owner = time.time(), project.owner
    for subject in sorted(subjects):
        job = JobRow(new_id("job"), project.id, INGEST_JOB, subject, None, "{}", created_at=now)
        enqueue(dataclasses.replace(job, owner=owner), conn)


def ingestion_subject(store_id: str, file_id: str) -> str:
    return f"{store_id}/{file_id}"


# A file attached again after it failed or was cancelled (it has no chunks) is ingested again,
# with the attributes and chunking strategy it is attached with now.
_RETRY = (
    VF.update()
    .where(
        VF.c.vector_store_id == sa.bindparam("r_store"),
        VF.c.file_id == sa.bindparam("r_file"),
        sa.or_(VF.c.status == "failed", VF.c.status == "cancelled"),
    )
    .values(
        status="in_progress",
        attributes=sa.bindparam("r_attributes"),
        chunking_strategy=sa.bindparam("r_chunking"),
        last_error=None,
        usage_bytes=0,
        claimed_by=None,
        claimed_at=None,
        attempts=0,
    )
)


def _retry_values(row: StoreFileRow) -> dict[str, str]:
    return {
        "r_store": row.vector_store_id,
        "r_file": row.file_id,
        "r_attributes": row.attributes,
        "r_chunking": row.chunking_strategy,
    }


def _get_file(
    store_id: str, file_id: str, project: Project, conn: Connection
) -> StoreFileRow | None:
    if not _owns(conn, project, store_id):
        return None
    query = sa.select(*_FILE_COLUMNS).where(
        VF.c.vector_store_id == store_id, VF.c.file_id == file_id
    )
    row = conn.execute(query).first()
    return None if row is None else _file_row(row)


def _list_files(
    store_id: str,
    cursor: Cursor,
    status: FileStatus | None,
    batch_id: str | None,
    project: Project,
    conn: Connection,
) -> Page[StoreFileRow]:
    if not _owns(conn, project, store_id):
        return Page([], False)
    seq = sa.select(VF.c.seq).where(
        VF.c.vector_store_id == store_id, VF.c.file_id == sa.bindparam("fid")
    )
    query = sa.select(*_FILE_COLUMNS).where(VF.c.vector_store_id == store_id)
    if status is not None:
        query = query.where(VF.c.status == status)
    if batch_id is not None:
        query = query.where(VF.c.batch_id == batch_id)
    return _page(conn, query, VF.c.seq, cursor, (seq, "fid"), _file_row)


def _page(
    conn: Connection,
    query: sa.Select[Any],
    key: sa.ColumnElement[int],
    cursor: Cursor,
    ids: tuple[sa.Select[Any], str],
    row: Callable[[Any], T],
) -> Page[T]:
    """``query``'s page at ``cursor``; ``ids``: the query (and its bind parameter) that turns
    the cursor's ids into sequence numbers."""
    seq, name = ids
    after = _seq_of(conn, seq, {name: cursor.after}, cursor.after, "after")
    before = _seq_of(conn, seq, {name: cursor.before}, cursor.before, "before")
    return keyset_page(
        conn,
        query,
        key,
        order=cursor.order,
        limit=cursor.limit,
        row=row,
        after=after,
        before=before,
    )


def _set_attributes(
    store_id: str, file_id: str, attributes: str, project: Project, conn: Connection
) -> StoreFileRow | None:
    if not _owns(conn, project, store_id, "update"):
        return None
    where = sa.and_(VF.c.vector_store_id == store_id, VF.c.file_id == file_id)
    updated = conn.execute(VF.update().where(where).values(attributes=attributes))
    return _get_file(store_id, file_id, project, conn) if updated.rowcount else None


# --- batches ---------------------------------------------------------------------------------


def _get_batch(
    store_id: str, batch_id: str, project: Project, conn: Connection
) -> BatchState | None:
    if not _owns(conn, project, store_id):
        return None
    query = sa.select(*_BATCH_COLUMNS).where(VB.c.id == batch_id, VB.c.vector_store_id == store_id)
    row = conn.execute(query).first()
    if row is None:
        return None
    batch = BatchRow(row.id, row.vector_store_id, row.created_at, bool(row.cancelled))
    return BatchState(batch, _counts(conn, VF.c.batch_id == batch_id))


def _cancel_batch(
    store_id: str, batch_id: str, project: Project, conn: Connection
) -> BatchState | None:
    if not lock_store(conn, store_id, project):
        return None
    mine = sa.and_(VB.c.id == batch_id, VB.c.vector_store_id == store_id)
    if not conn.execute(VB.update().where(mine).values(cancelled=True)).rowcount:
        return None
    pending = sa.and_(VF.c.batch_id == batch_id, VF.c.status == "in_progress")
    conn.execute(VF.update().where(pending).values(status="cancelled", claimed_by=None))
    return _get_batch(store_id, batch_id, project, conn)


# --- helpers ---------------------------------------------------------------------------------


def lock_store(
    conn: Connection, store_id: str, project: Project, action: Action = "update"
) -> bool:
    """Lock the store's row for this transaction; ``False`` if there is no such store (in
    ``project``, that the access rules let the viewer change: its files follow it)."""
    lock = project.visible(_LOCK_MINE, VS, action)
    return conn.scalar(lock, project.params(sid=store_id)) is not None


def _owns(conn: Connection, project: Project, store_id: str, action: Action = "read") -> bool:
    found = project.visible(_OWNS, VS, action)
    return conn.scalar(found, project.params(sid=store_id)) is not None


def _seq_of(
    conn: Connection, query: sa.Select[Any], params: dict[str, Any], given: str | None, param: str
) -> int | None:
    if given is None:
        return None
    seq = conn.scalar(query, params)
    if seq is None:
        raise NotFoundError(f"No object with id '{given}' to page from.", param=param)
    return int(seq)


def _counts(conn: Connection, where: sa.ColumnElement[bool]) -> FileCounts:
    return _file_counts({r.status: _tally(r) for r in conn.execute(_COUNTS.where(where))})


def _tally(row: Any) -> tuple[int, int, int, int]:
    """A status's files, their bytes, their chunks and those embedded so far."""
    return int(row.n), int(row.usage or 0), int(row.chunks or 0), int(row.embedded or 0)


def _counts_by_store(conn: Connection, store_ids: list[str]) -> dict[str, FileCounts]:
    if not store_ids:
        return {}
    query = (
        sa.select(VF.c.vector_store_id, *_COUNTS.selected_columns)
        .where(VF.c.vector_store_id.in_(store_ids))
        .group_by(VF.c.vector_store_id, VF.c.status)
    )
    grouped: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    for r in conn.execute(query):
        grouped.setdefault(r.vector_store_id, {})[r.status] = _tally(r)
    return {store_id: _file_counts(by_status) for store_id, by_status in grouped.items()}


def _file_counts(by_status: dict[str, tuple[int, int, int, int]]) -> FileCounts:
    def n(status: str) -> int:
        return by_status.get(status, (0, 0, 0, 0))[0]

    usage = by_status.get("completed", (0, 0, 0, 0))[1]
    _, _, chunks, embedded = by_status.get("in_progress", (0, 0, 0, 0))
    counts = n("in_progress"), n("completed"), n("failed"), n("cancelled")
    return FileCounts(*counts, usage_bytes=usage, chunks=chunks, chunks_embedded=embedded)


def store_row(row: Any) -> StoreRow:
    return StoreRow(
        id=row.id,
        created_at=row.created_at,
        name=row.name,
        metadata=row.metadata,
        expires_after=row.expires_after,
        expires_at=row.expires_at,
        last_active_at=row.last_active_at,
        embedder=row.embedder,
        dimensions=row.dimensions,
        epoch=row.epoch,
    )


def _file_row(row: Any) -> StoreFileRow:
    return StoreFileRow(
        vector_store_id=row.vector_store_id,
        file_id=row.file_id,
        created_at=row.created_at,
        status=row.status,
        attributes=row.attributes,
        chunking_strategy=row.chunking_strategy,
        batch_id=row.batch_id,
        last_error=row.last_error,
        usage_bytes=row.usage_bytes,
        chunks_total=row.chunks_total,
        chunks_embedded=row.chunks_embedded,
    )
