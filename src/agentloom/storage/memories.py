"""The memory store: the rows behind :class:`agentloom.agents.memory.MemoryStore`.

A note belongs to a namespace and keeps, beside its text, its distinct keywords (``terms``,
space-separated) for the SDK's keyword ranking. Ids grow with every note, so the newest notes
are the highest ids.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.runner import Runner

M = schema.memories
_NEWEST = (
    sa.select(M.c.id, M.c.namespace, M.c.content, M.c.terms, M.c.created_at)
    .where(M.c.namespace == sa.bindparam("namespace"))
    .order_by(M.c.id.desc())
)


@frozen
class MemoryRow:
    id: int
    namespace: str
    content: str
    terms: str  # the note's distinct keywords, space-separated
    created_at: float  # unix seconds


class SqlMemoryStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def insert(self, namespace: str, content: str, terms: str, *, now: float) -> MemoryRow:
        return await self._runner.write_statement(partial(_insert, namespace, content, terms, now))

    async def newest(self, namespace: str, limit: int | None = None) -> list[MemoryRow]:
        """The namespace's ``limit`` newest notes (all of them for ``None``), newest first."""
        return await self._runner.read(partial(_newest, namespace, limit))


def _insert(namespace: str, content: str, terms: str, now: float, conn: Connection) -> MemoryRow:
    insert = M.insert().values(namespace=namespace, content=content, terms=terms, created_at=now)
    row_id = conn.execute(insert.returning(M.c.id)).scalar_one()
    return MemoryRow(row_id, namespace, content, terms, now)


def _newest(namespace: str, limit: int | None, conn: Connection) -> list[MemoryRow]:
    select = _NEWEST if limit is None else _NEWEST.limit(limit)
    return [_row(row) for row in conn.execute(select, {"namespace": namespace})]


def _row(row: Any) -> MemoryRow:
    return MemoryRow(
        id=row.id,
        namespace=row.namespace,
        content=row.content,
        terms=row.terms,
        created_at=row.created_at,
    )
