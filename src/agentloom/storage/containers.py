"""The container store: one row per code_interpreter container (its files are on disk).

A container unused for ``expires_minutes`` after ``last_active_at`` is expired: reads pass
``now`` and skip it; housekeeping finds such rows with :meth:`SqlContainerStore.idle` and
deletes them. Pages are keyset-paginated on ``seq``.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.access_rules import Action
from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Owned, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import Project, ProjectRunner, across_projects

C = schema.containers
_COLUMNS = (
    C.c.id,
    C.c.created_at,
    C.c.name,
    C.c.last_active_at,
    C.c.expires_minutes,
    C.c.memory_limit,
    C.c.user_paths,
)


@frozen
class ContainerRow:
    id: str
    created_at: float  # unix seconds
    name: str
    last_active_at: float
    expires_minutes: int
    memory_limit: str | None
    user_paths: tuple[str, ...] = ()  # files the user put in, relative to the folder

    @property
    def expires_at(self) -> float:
        return self.last_active_at + self.expires_minutes * 60.0


class ContainerStore(Protocol):
    async def insert(self, row: ContainerRow) -> None: ...

    async def get(
        self, container_id: str, *, now: float, action: Action = "read"
    ) -> ContainerRow | None:
        """The container, unless it does not exist or expired before ``now`` (or the access
        rules do not let the viewer ``action`` it)."""

    async def list_page(
        self, *, after: str | None, limit: int, order: Order, now: float
    ) -> Page[ContainerRow] | None:
        """Live containers by creation; ``None`` when the ``after`` container does not exist."""

    async def touch(self, container_id: str, *, now: float, user_path: str | None = None) -> None:
        """Mark it active at ``now`` (and record a file the user put in)."""

    async def delete(self, container_id: str) -> bool: ...

    async def idle(self, *, now: float, limit: int) -> list[Owned]:
        """Up to ``limit`` containers of any project expired before ``now``."""


class SqlContainerStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = ProjectRunner(runner)

    async def insert(self, row: ContainerRow) -> None:
        await self._runner.write_statement(partial(_insert, row))

    async def get(
        self, container_id: str, *, now: float, action: Action = "read"
    ) -> ContainerRow | None:
        return await self._runner.read(partial(_get, container_id, now, action))

    async def list_page(
        self, *, after: str | None, limit: int, order: Order, now: float
    ) -> Page[ContainerRow] | None:
        return await self._runner.read(partial(_list, after, limit, order, now))

    async def touch(self, container_id: str, *, now: float, user_path: str | None = None) -> None:
        await self._runner.write(partial(_touch, container_id, now, user_path))

    async def delete(self, container_id: str) -> bool:
        return await self._runner.write(partial(_delete, container_id))

    async def idle(self, *, now: float, limit: int) -> list[Owned]:
        return await self._runner.across_projects.read(partial(_idle, now, limit))


def _live(now: float) -> sa.ColumnElement[bool]:
    return C.c.last_active_at + C.c.expires_minutes * 60.0 > now


def _mine(project: Project, container_id: str) -> sa.ColumnElement[bool]:
    return project.rows(C, C.c.id == container_id)


def _insert(row: ContainerRow, project: Project, conn: Connection) -> None:
    values = {c.name: getattr(row, c.name) for c in _COLUMNS if c.name != "user_paths"}
    paths = json.dumps(list(row.user_paths))
    conn.execute(project.insert(C).values(**values, user_paths=paths))


def _get(
    container_id: str, now: float, action: Action, project: Project, conn: Connection
) -> ContainerRow | None:
    mine = C.c.project_id == project.id, C.c.id == container_id, _live(now)
    select = project.visible(sa.select(*_COLUMNS).where(*mine), C, action)
    row = conn.execute(select).first()
    return None if row is None else _row(row)


def _list(
    after: str | None, limit: int, order: Order, now: float, project: Project, conn: Connection
) -> Page[ContainerRow] | None:
    select = sa.select(*_COLUMNS).where(project.rows(C, _live(now)))
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(C.c.seq).where(_mine(project, after)))
        if cursor is None:
            return None
    return keyset_page(conn, select, C.c.seq, order=order, limit=limit, row=_row, after=cursor)


def _touch(
    container_id: str, now: float, user_path: str | None, project: Project, conn: Connection
) -> None:
    values: dict[str, object] = {"last_active_at": now}
    if user_path is not None:
        raw = conn.scalar(sa.select(C.c.user_paths).where(_mine(project, container_id)))
        paths = set(json.loads(raw)) if raw else set()
        values["user_paths"] = json.dumps(sorted(paths | {user_path}))
    conn.execute(project.update(C, C.c.id == container_id).values(**values))


def _delete(container_id: str, project: Project, conn: Connection) -> bool:
    return bool(conn.execute(project.delete(C, C.c.id == container_id)).rowcount)


def _idle(now: float, limit: int, conn: Connection) -> list[Owned]:
    select = across_projects(sa.select(C.c.project_id, C.c.id).where(sa.not_(_live(now))))
    rows = conn.execute(select.order_by(C.c.last_active_at).limit(limit))
    return [Owned(r.project_id, r.id) for r in rows]


def _row(row: Any) -> ContainerRow:
    return ContainerRow(
        id=row.id,
        created_at=row.created_at,
        name=row.name,
        last_active_at=row.last_active_at,
        expires_minutes=int(row.expires_minutes),
        memory_limit=row.memory_limit,
        user_paths=tuple(json.loads(row.user_paths)),
    )
