"""The store of chat completions created with ``store: true``: one row each, its answer (the
ChatCompletion object), its request's messages and its metadata, a project's.

Pages are keyset-paginated on ``seq`` (creation order); a list can be narrowed to a model and
to metadata pairs, compared in the database (SQLite's ``json_extract``, PostgreSQL's ``->>``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner

CC = schema.chat_completions
_COLUMNS = (CC.c.id, CC.c.created_at, CC.c.model, CC.c.metadata, CC.c.body, CC.c.messages)


@frozen
class StoredCompletionRow:
    id: str
    created_at: float  # unix seconds
    model: str  # as the client named it
    metadata: str  # JSON object of strings
    body: str  # the ChatCompletion object, JSON
    messages: str  # the request's messages, a JSON array


@frozen
class CompletionQuery:
    after: str | None = None
    limit: int = 20
    order: Order = "asc"
    model: str | None = None
    metadata: Mapping[str, str] | None = None  # every pair must match


class SqlChatCompletionStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def insert(self, row: StoredCompletionRow) -> None:
        await self._runner.write_statement(partial(_insert, row))

    async def get(self, completion_id: str) -> StoredCompletionRow | None:
        return await self._runner.read(partial(_get, completion_id))

    async def list_page(self, query: CompletionQuery) -> Page[StoredCompletionRow] | None:
        """``None`` when the ``after`` completion does not exist (in this project)."""
        return await self._runner.read(partial(_list, query))

    async def set_metadata(self, completion_id: str, metadata: str) -> bool:
        return await self._runner.write_statement(partial(_set_metadata, completion_id, metadata))

    async def delete(self, completion_id: str) -> bool:
        return await self._runner.write_statement(partial(_delete, completion_id))


def _insert(row: StoredCompletionRow, project: Project, conn: Connection) -> None:
    values = {column.name: getattr(row, column.name) for column in _COLUMNS}
    conn.execute(project.insert(CC).values(**values))


def _get(completion_id: str, project: Project, conn: Connection) -> StoredCompletionRow | None:
    found = conn.execute(sa.select(*_COLUMNS).where(project.rows(CC, CC.c.id == completion_id)))
    row = found.first()
    return None if row is None else _row(row)


def _list(
    query: CompletionQuery, project: Project, conn: Connection
) -> Page[StoredCompletionRow] | None:
    criteria = [] if query.model is None else [CC.c.model == query.model]
    for key, value in (query.metadata or {}).items():
        criteria.append(_metadata_value(conn, key) == value)
    select = sa.select(*_COLUMNS).where(project.rows(CC, *criteria))
    cursor = None
    if query.after is not None:
        cursor = conn.scalar(sa.select(CC.c.seq).where(project.rows(CC, CC.c.id == query.after)))
        if cursor is None:
            return None
    return keyset_page(
        conn, select, CC.c.seq, order=query.order, limit=query.limit, row=_row, after=cursor
    )


def _metadata_value(conn: Connection, key: str) -> sa.ColumnElement[Any]:
    """The value of metadata ``key`` (NULL where it is not set), in the database's JSON."""
    if conn.dialect.name == "postgresql":
        value: sa.ColumnElement[Any] = sa.cast(CC.c.metadata, postgresql.JSONB)[key].astext
        return value
    return sa.func.json_extract(CC.c.metadata, "$." + json.dumps(key))


def _set_metadata(completion_id: str, metadata: str, project: Project, conn: Connection) -> bool:
    changed = conn.execute(project.update(CC, CC.c.id == completion_id).values(metadata=metadata))
    return bool(changed.rowcount)


def _delete(completion_id: str, project: Project, conn: Connection) -> bool:
    return bool(conn.execute(project.delete(CC, CC.c.id == completion_id)).rowcount)


def _row(row: Any) -> StoredCompletionRow:
    return StoredCompletionRow(
        id=row.id,
        created_at=row.created_at,
        model=row.model,
        metadata=row.metadata,
        body=row.body,
        messages=row.messages,
    )
