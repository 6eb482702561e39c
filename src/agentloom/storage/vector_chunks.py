"""Chunks of vector stores: ingestion claims and results, removal, and what searches read.

Ingestion: each ``in_progress`` file has a job (kind ``"ingest"``, queued with the file: see
:func:`~agentloom.storage.vector_stores.queue_ingestion`); the process running the job claims
the file (``claimed_by``), taking it from whoever held it before (the job's lease says who
may). The result is written only while the file is still ``in_progress`` and claimed by the
writer, in the transaction that inserts its chunks: a file removed, cancelled or taken over
meanwhile gets no chunks.
Removing a file deletes its chunks and bumps the store's ``epoch`` in one transaction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.storage import schema
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects, in_project
from agentloom.storage.vector_stores import lock_store, store_row
from agentloom.storage.vector_stores_base import (
    ChunkBatches,
    ChunkText,
    Claim,
    IndexState,
    NewChunk,
    StoredChunks,
)
from agentloom.tenancy import DEFAULT_PROJECT

VS = schema.vector_stores
VF = schema.vector_store_files
VC = schema.vector_store_chunks
F = schema.files

_MAX_SEQ = sa.select(sa.func.max(VC.c.seq)).where(VC.c.vector_store_id == VS.c.id).scalar_subquery()
_INDEX_STATE = sa.select(VS, _MAX_SEQ.label("max_seq")).where(
    VS.c.id == sa.bindparam("sid"), in_project(VS)
)


class SqlChunkStore:
    """Ingestion serves every project: it claims a file whichever project's it is, and goes on
    as the project of its claim (:attr:`Claim.project_id`). Chunks and store files have no
    project column: they are reached by the store's id, once the store was found in the
    running work's project (:meth:`index_state`, the API's own checks)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)
        self._chunks = runner  # chunk and file rows: no project column

    # --- ingestion ---------------------------------------------------------------------------

    async def claim(self, store_id: str, file_id: str, instance_id: str) -> Claim | None:
        """Claim the file for this instance (its ingestion job runs here); ``None`` when it is
        no longer ``in_progress`` (removed, cancelled, or done)."""
        claim = partial(_claim, store_id, file_id, instance_id)
        return await self._runner.across_projects.write(claim)

    async def progress(self, claim: Claim, instance_id: str, embedded: int, total: int) -> bool:
        """Record how far the file's ingestion has got (``embedded`` of ``total`` chunks);
        ``False`` when it is no longer in progress and claimed by this instance."""
        write = partial(_progress, claim, instance_id, embedded, total)
        return await self._chunks.write_statement(write)

    async def complete(
        self, claim: Claim, instance_id: str, chunks: ChunkBatches, count: int, usage_bytes: int
    ) -> bool:
        """Store the chunks and mark the file ``completed``; ``False`` (nothing written) when
        the file is no longer this instance's to complete. The chunks are inserted a batch at
        a time, all in the transaction that completes the file."""
        write = partial(_complete, claim, instance_id, chunks, count, usage_bytes)
        return await self._chunks.write(write)

    async def fail(self, claim: Claim, instance_id: str, last_error: str) -> bool:
        return await self._chunks.write_statement(partial(_fail, claim, instance_id, last_error))

    # --- removal -----------------------------------------------------------------------------

    async def remove_file(self, store_id: str, file_id: str) -> bool:
        """Detach the file from the store, chunks included; ``False`` if it was not there."""
        return await self._runner.write(partial(_remove, store_id, file_id))

    async def remove_file_everywhere(self, file_id: str) -> list[str]:
        """Detach the file from every store; the ids of those stores."""
        return await self._runner.write(partial(_remove_everywhere, file_id))

    # --- search ------------------------------------------------------------------------------

    async def index_state(self, store_id: str) -> IndexState | None:
        """The store (of the running work's project) and its newest chunk's ``seq``."""
        return await self._runner.read(partial(_index_state, store_id))

    async def chunks(self, store_id: str, *, after: int, upto: int, limit: int) -> StoredChunks:
        """Up to ``limit`` of the store's chunks with ``after < seq <= upto``, by ``seq``."""
        return await self._chunks.read(partial(_chunks, store_id, after, upto, limit))

    async def first_seqs(self, store_id: str) -> dict[str, int]:
        """The ``seq`` of each file's first chunk in the store."""
        return await self._chunks.read(partial(_first_seqs, store_id))

    async def attributes(self, store_id: str) -> list[tuple[str, str]]:
        """``(file_id, attributes JSON)`` of the store's completed files."""
        return await self._chunks.read(partial(_attributes, store_id))

    async def texts(self, store_id: str, seqs: Sequence[int]) -> list[ChunkText]:
        """The chunks with these ``seq`` still in the store (their file completed)."""
        return await self._runner.read(partial(_texts, store_id, list(seqs)))


# --- ingestion -------------------------------------------------------------------------------


def _claim(store_id: str, file_id: str, instance_id: str, conn: Connection) -> Claim | None:
    waiting = sa.and_(
        VF.c.vector_store_id == store_id, VF.c.file_id == file_id, VF.c.status == "in_progress"
    )
    claimed = conn.execute(
        VF.update()
        .where(waiting)
        .values(claimed_by=instance_id, claimed_at=time.time(), attempts=VF.c.attempts + 1)
        .returning(VF.c.chunking_strategy, VF.c.attempts)
    ).first()
    if claimed is None:
        return None
    owner = across_projects(sa.select(VS.c.project_id).where(VS.c.id == store_id))
    project = conn.scalar(owner) or DEFAULT_PROJECT
    return Claim(store_id, file_id, claimed.chunking_strategy, claimed.attempts, project)


def _mine(claim: Claim, instance_id: str) -> sa.ColumnElement[bool]:
    return sa.and_(
        VF.c.vector_store_id == claim.vector_store_id,
        VF.c.file_id == claim.file_id,
        VF.c.status == "in_progress",
        VF.c.claimed_by == instance_id,
    )


def _progress(claim: Claim, instance_id: str, embedded: int, total: int, conn: Connection) -> bool:
    values = {"chunks_embedded": embedded, "chunks_total": total}
    return conn.execute(VF.update().where(_mine(claim, instance_id)).values(values)).rowcount == 1


def _complete(
    claim: Claim,
    instance_id: str,
    chunks: ChunkBatches,
    count: int,
    usage_bytes: int,
    conn: Connection,
) -> bool:
    if not lock_store(conn, claim.vector_store_id, Project(claim.project_id)):
        return False
    done = conn.execute(
        VF.update()
        .where(_mine(claim, instance_id))
        .values(
            status="completed",
            usage_bytes=usage_bytes,
            claimed_by=None,
            last_error=None,
            chunks_total=count,
            chunks_embedded=count,
        )
    )
    if done.rowcount != 1:
        return False
    for batch in chunks():
        if batch:
            conn.execute(VC.insert(), [_chunk_values(claim, chunk) for chunk in batch])
    return True


def _chunk_values(claim: Claim, chunk: NewChunk) -> dict[str, Any]:
    return {
        "vector_store_id": claim.vector_store_id,
        "file_id": claim.file_id,
        "position": chunk.position,
        "text": chunk.text,
        "vector": chunk.vector,
    }


def _fail(claim: Claim, instance_id: str, last_error: str, conn: Connection) -> bool:
    failed = conn.execute(
        VF.update()
        .where(_mine(claim, instance_id))
        .values(status="failed", last_error=last_error, claimed_by=None)
    )
    return failed.rowcount == 1


# --- removal ---------------------------------------------------------------------------------


def _remove(store_id: str, file_id: str, project: Project, conn: Connection) -> bool:
    if not lock_store(conn, store_id, project):
        return False
    where = sa.and_(VF.c.vector_store_id == store_id, VF.c.file_id == file_id)
    if not conn.execute(VF.delete().where(where)).rowcount:
        return False
    chunks = sa.and_(VC.c.vector_store_id == store_id, VC.c.file_id == file_id)
    if conn.execute(VC.delete().where(chunks)).rowcount:
        conn.execute(project.update(VS, VS.c.id == store_id).values(epoch=VS.c.epoch + 1))
    return True


def _remove_everywhere(file_id: str, project: Project, conn: Connection) -> list[str]:
    query = sa.select(VF.c.vector_store_id).where(VF.c.file_id == file_id)
    stores = sorted({row.vector_store_id for row in conn.execute(query)})
    return [store_id for store_id in stores if _remove(store_id, file_id, project, conn)]


# --- search ----------------------------------------------------------------------------------


def _index_state(store_id: str, project: Project, conn: Connection) -> IndexState | None:
    found = project.visible(_INDEX_STATE, VS)
    row = conn.execute(found, project.params(sid=store_id)).first()
    if row is None:
        return None
    return IndexState(store_row(row), int(row.max_seq or 0))


def _chunks(store_id: str, after: int, upto: int, limit: int, conn: Connection) -> StoredChunks:
    query = (
        sa.select(VC.c.seq, VC.c.file_id, VC.c.text, VC.c.vector)
        .where(VC.c.vector_store_id == store_id, VC.c.seq > after, VC.c.seq <= upto)
        .order_by(VC.c.seq)
        .limit(limit)
    )
    loaded = StoredChunks([], [], [], [])
    for row in conn.execute(query):
        loaded.seqs.append(int(row.seq))
        loaded.file_ids.append(row.file_id)
        loaded.texts.append(row.text)
        loaded.vectors.append(bytes(row.vector))
    return loaded


def _first_seqs(store_id: str, conn: Connection) -> dict[str, int]:
    query = (
        sa.select(VC.c.file_id, sa.func.min(VC.c.seq).label("first"))
        .where(VC.c.vector_store_id == store_id)
        .group_by(VC.c.file_id)
    )
    return {row.file_id: int(row.first) for row in conn.execute(query)}


def _attributes(store_id: str, conn: Connection) -> list[tuple[str, str]]:
    query = sa.select(VF.c.file_id, VF.c.attributes).where(
        VF.c.vector_store_id == store_id, VF.c.status == "completed"
    )
    return [(row.file_id, row.attributes) for row in conn.execute(query)]


def _texts(store_id: str, seqs: list[int], project: Project, conn: Connection) -> list[ChunkText]:
    if not seqs:
        return []
    joined = VC.join(
        VF, sa.and_(VF.c.vector_store_id == VC.c.vector_store_id, VF.c.file_id == VC.c.file_id)
    ).outerjoin(F, project.rows(F, F.c.id == VC.c.file_id))
    query = (
        sa.select(VC.c.seq, VC.c.file_id, VC.c.text, VF.c.attributes, F.c.filename)
        .select_from(joined)
        .where(VC.c.vector_store_id == store_id, VC.c.seq.in_(seqs), VF.c.status == "completed")
    )
    return [
        ChunkText(r.seq, r.file_id, r.text, r.attributes, r.filename or r.file_id)
        for r in conn.execute(query)
    ]
