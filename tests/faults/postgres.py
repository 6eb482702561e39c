"""PostgreSQL as a fault: an administrator's connection ends the server's sessions
(``pg_terminate_backend``), or turns the database away (``ALLOW_CONNECTIONS false``) for a
while, and counts what the server holds open."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.engine import make_url

from tests.plugins.db import _admin_url, _dsn


def database_name(url: str) -> str:
    name = make_url(url).database
    assert name, url
    return name


@asynccontextmanager
async def admin() -> AsyncIterator[asyncpg.Connection]:
    """A connection of the test's own, to the server's maintenance database."""
    conn = await asyncpg.connect(_dsn(_admin_url()), timeout=5)
    try:
        yield conn
    finally:
        await conn.close()


async def terminate(url: str, *, query_like: str | None = None) -> int:
    """End every session on ``url``'s database (only those running a query ``LIKE
    query_like``, if given); how many were ended."""
    sql = (
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE datname = $1 AND pid <> pg_backend_pid()"
    )
    args: list[object] = [database_name(url)]
    if query_like is not None:
        sql += " AND state = 'active' AND query LIKE $2"
        args.append(query_like)
    async with admin() as conn:
        return int(await conn.fetchval(sql, *args))


async def sessions(url: str) -> int:
    """Sessions open on ``url``'s database (the server's pools and listener)."""
    async with admin() as conn:
        sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
        return int(await conn.fetchval(sql, database_name(url)))


async def allow_connections(url: str, allowed: bool) -> None:
    """Let sessions open on ``url``'s database, or refuse them all (superusers too)."""
    value = "true" if allowed else "false"
    async with admin() as conn:
        await conn.execute(f'ALTER DATABASE "{database_name(url)}" ALLOW_CONNECTIONS {value}')


@asynccontextmanager
async def away(url: str) -> AsyncIterator[None]:
    """The database gone for the server while the block runs: new sessions refused, open
    ones ended; back when the block ends."""
    await allow_connections(url, False)
    try:
        await terminate(url)
        yield
    finally:
        await allow_connections(url, True)
