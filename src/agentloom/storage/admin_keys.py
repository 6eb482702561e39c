"""Admin keys made through the admin API (the organization's; no project)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import field_names, frozen
from agentloom.storage import schema
from agentloom.storage.base import Order, Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.projects import bump_epoch
from agentloom.storage.runner import Runner

AK = schema.admin_keys
ADMIN_KEY_PREFIX = "admin_key"  # of their ids


@frozen
class AdminKeyRow:
    id: str
    name: str
    digest: str
    redacted: str
    created_at: float
    expires_at: float | None = None
    last_used_at: float | None = None


_COLUMNS = tuple(AK.c[name] for name in field_names(AdminKeyRow))


class SqlAdminKeyStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def create(self, row: AdminKeyRow) -> None:
        await self._runner.write(partial(_create, row))

    async def get(self, key_id: str) -> AdminKeyRow | None:
        return await self._runner.read(partial(_get, AK.c.id == key_id))

    async def find(self, digest: str) -> AdminKeyRow | None:
        return await self._runner.read(partial(_get, AK.c.digest == digest))

    async def list_page(
        self, after: str | None, limit: int, order: Order
    ) -> Page[AdminKeyRow] | None:
        return await self._runner.read(partial(_list, after, limit, order))

    async def delete(self, key_id: str) -> bool:
        return await self._runner.write(partial(_delete, key_id))

    async def touch(self, key_id: str, now: float) -> None:
        await self._runner.write_statement(partial(_touch, key_id, now))


def _create(row: AdminKeyRow, conn: Connection) -> None:
    conn.execute(AK.insert().values(**asdict(row)))


def _row(row: Any) -> AdminKeyRow:
    return AdminKeyRow(*(getattr(row, c.name) for c in _COLUMNS))


def _get(where: sa.ColumnElement[bool], conn: Connection) -> AdminKeyRow | None:
    row = conn.execute(sa.select(*_COLUMNS).where(where)).first()
    return None if row is None else _row(row)


def _list(
    after: str | None, limit: int, order: Order, conn: Connection
) -> Page[AdminKeyRow] | None:
    cursor = None
    if after is not None:
        cursor = conn.scalar(sa.select(AK.c.seq).where(AK.c.id == after))
        if cursor is None:
            return None
    select = sa.select(*_COLUMNS)
    return keyset_page(conn, select, AK.c.seq, order=order, limit=limit, row=_row, after=cursor)


def _delete(key_id: str, conn: Connection) -> bool:
    deleted = conn.execute(AK.delete().where(AK.c.id == key_id)).rowcount > 0
    if deleted:
        bump_epoch(conn)
    return deleted


def _touch(key_id: str, now: float, conn: Connection) -> None:
    conn.execute(AK.update().where(AK.c.id == key_id).values(last_used_at=now))
