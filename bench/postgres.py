"""Scratch PostgreSQL databases for the benchmark: made on the server of an admin URL, dropped
after (``make bench``, ``bench.soak``)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Iterator

import asyncpg
from sqlalchemy.engine import make_url

DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"


def dsn(url: str) -> str:
    """``url`` as asyncpg takes it (no SQLAlchemy driver name)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def admin(url: str, sql: str) -> None:
    """Run ``sql`` on the database of ``url``."""
    conn = await asyncpg.connect(dsn(url), timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def reachable(url: str) -> bool:
    try:
        asyncio.run(admin(url, "SELECT 1"))
    except (OSError, asyncpg.PostgresError):
        return False
    return True


@contextlib.contextmanager
def scratch(admin_url: str, prefix: str = "agentloom_bench") -> Iterator[str]:
    """The URL of a new database on the server of ``admin_url``, dropped on the way out."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    asyncio.run(admin(admin_url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def sessions(database_url: str) -> int | None:
    """Sessions open on ``database_url``'s PostgreSQL database (``None`` on SQLite)."""
    if not database_url.startswith("postgresql"):
        return None
    server = make_url(database_url).set(database="postgres").render_as_string(hide_password=False)
    conn = await asyncpg.connect(dsn(server), timeout=5)
    try:
        query = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()"
        )
        return int(await conn.fetchval(query, make_url(database_url).database))
    finally:
        await conn.close()
