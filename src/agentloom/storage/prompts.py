"""The prompt store: SQLAlchemy Core statements, the same on SQLite and PostgreSQL.

Each operation is a synchronous function of a connection, run by the database's
:class:`~agentloom.storage.runner.Runner`. A write to an existing prompt first locks its version-1
row (``FOR UPDATE`` on PostgreSQL; SQLite writers are serialised anyway), so updates, default
changes and deletes of one prompt run one after the other and every one of them sees the
versions the others added: a prompt always has exactly one default. The unique ``(id, version)``
constraint is the last word between writers that the lock cannot order (other processes on one
SQLite file): the loser of a race is told its version is stale, never a server error.

A prompt's place in the list is the ``seq`` of its version 1 (created with the prompt, removed
only with it), so keyset pagination is exact however many prompts share a second.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from agentloom.access_rules import Action
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.prompts_base import AddOutcome, PromptRow
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, in_project

P = schema.prompts
FIRST = P.alias("first_version")
DEFAULT = P.alias("default_version")

_PID: sa.BindParameter[str] = sa.bindparam("pid")
_MINE = sa.and_(P.c.id == _PID, in_project(P))
_COLUMNS = (P.c.id, P.c.version, P.c.created_at, P.c.is_default, P.c.body)
_GET_DEFAULT = sa.select(*_COLUMNS).where(_MINE, P.c.is_default == sa.true()).limit(1)
_GET_VERSION = sa.select(*_COLUMNS).where(_MINE, P.c.version == sa.bindparam("version"))
_VERSIONS = sa.select(*_COLUMNS).where(_MINE).order_by(P.c.version)
_FIRST_SEQ = sa.select(P.c.seq).where(_MINE, P.c.version == 1)
_LOCK = _FIRST_SEQ.with_for_update()
_LATEST = sa.select(sa.func.max(P.c.version)).where(_MINE)
_LIST = (
    sa.select(*(DEFAULT.c[c.name] for c in _COLUMNS))
    .select_from(
        FIRST.join(DEFAULT, sa.and_(DEFAULT.c.id == FIRST.c.id, DEFAULT.c.is_default == sa.true()))
    )
    .where(FIRST.c.version == 1)
)


class SqlPromptStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def create(self, row: PromptRow) -> None:
        await self._runner.write(partial(_insert, row))

    async def get(self, prompt_id: str, version: int | None) -> PromptRow | None:
        return await self._runner.read(partial(_get, prompt_id, version))

    async def exists(self, prompt_id: str) -> bool:
        return await self._runner.read(partial(_exists, prompt_id))

    async def versions(self, prompt_id: str) -> list[PromptRow]:
        return await self._runner.read(partial(_versions, prompt_id))

    async def add_version(self, row: PromptRow, *, based_on: int) -> AddOutcome:
        try:
            return await self._runner.write(partial(_add_version, row, based_on))
        except IntegrityError:  # a concurrent update inserted this version first
            return "stale"

    async def set_default(self, prompt_id: str, version: int) -> PromptRow | None:
        return await self._runner.write(partial(_set_default, prompt_id, version))

    async def delete(self, prompt_id: str) -> bool:
        return await self._runner.write(partial(_delete, prompt_id))

    async def list_page(
        self, *, after: str | None, limit: int, order: Order
    ) -> Page[PromptRow] | None:
        return await self._runner.read(partial(_list, after, limit, order))


# --- operations ------------------------------------------------------------------------------


def _insert(row: PromptRow, project: Project, conn: Connection) -> None:
    insert = project.insert(P).values(
        id=row.id,
        version=row.version,
        created_at=row.created_at,
        is_default=row.is_default,
        body=row.body,
    )
    if row.version > 1:  # a prompt's versions are its first version's owner's
        first = sa.select(P.c.owner).where(P.c.project_id == project.id, P.c.id == row.id)
        insert = insert.values(owner=first.where(P.c.version == 1).scalar_subquery())
    conn.execute(insert)


def _get(
    prompt_id: str, version: int | None, project: Project, conn: Connection
) -> PromptRow | None:
    if version is None:
        row = conn.execute(project.visible(_GET_DEFAULT, P), project.params(pid=prompt_id)).first()
    else:
        found = project.visible(_GET_VERSION, P)
        row = conn.execute(found, project.params(pid=prompt_id, version=version)).first()
    return None if row is None else _row(row)


def _exists(prompt_id: str, project: Project, conn: Connection) -> bool:
    return conn.scalar(project.visible(_FIRST_SEQ, P), project.params(pid=prompt_id)) is not None


def _versions(prompt_id: str, project: Project, conn: Connection) -> list[PromptRow]:
    versions = project.visible(_VERSIONS, P)
    return [_row(row) for row in conn.execute(versions, project.params(pid=prompt_id))]


def _locked(prompt_id: str, project: Project, conn: Connection, action: Action = "update") -> bool:
    """Lock the prompt against other writers for this transaction; ``False`` if it is gone (or
    the access rules do not let the viewer ``action`` it)."""
    lock = project.visible(_LOCK, P, action)
    return conn.scalar(lock, project.params(pid=prompt_id)) is not None


def _add_version(row: PromptRow, based_on: int, project: Project, conn: Connection) -> AddOutcome:
    if not _locked(row.id, project, conn):
        return "missing"
    if conn.scalar(_LATEST, project.params(pid=row.id)) != based_on:
        return "stale"
    _insert(row, project, conn)
    if row.is_default:
        _make_default(row.id, row.version, project, conn)
    return "added"


def _set_default(
    prompt_id: str, version: int, project: Project, conn: Connection
) -> PromptRow | None:
    if not _locked(prompt_id, project, conn):
        return None
    row = conn.execute(_GET_VERSION, project.params(pid=prompt_id, version=version)).first()
    if row is None:
        return None
    _make_default(prompt_id, version, project, conn)
    return dataclasses.replace(_row(row), is_default=True)


def _make_default(prompt_id: str, version: int, project: Project, conn: Connection) -> None:
    conn.execute(project.update(P, P.c.id == prompt_id).values(is_default=P.c.version == version))


def _delete(prompt_id: str, project: Project, conn: Connection) -> bool:
    if not _locked(prompt_id, project, conn, "delete"):
        return False
    conn.execute(project.delete(P, P.c.id == prompt_id))
    return True


def _list(
    after: str | None, limit: int, order: Order, project: Project, conn: Connection
) -> Page[PromptRow] | None:
    cursor = None
    if after is not None:
        cursor = conn.scalar(project.visible(_FIRST_SEQ, P), project.params(pid=after))
        if cursor is None:
            return None
    query = _LIST.where(project.rows(FIRST), project.rows(DEFAULT))
    return keyset_page(conn, query, FIRST.c.seq, order=order, limit=limit, row=_row, after=cursor)


def _row(row: Any) -> PromptRow:
    return PromptRow(
        id=row.id,
        version=row.version,
        created_at=row.created_at,
        is_default=bool(row.is_default),
        body=row.body,
    )
