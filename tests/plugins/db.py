"""Database fixtures: every storage test runs on SQLite and on PostgreSQL.

PostgreSQL comes from ``AGENTLOOM_TEST_POSTGRES_URL`` (default: the local server's ``test``
database). Each test session creates its own database there and drops it at the end; each test
starts from empty tables. Without a reachable server the PostgreSQL cases are skipped, unless
``AGENTLOOM_REQUIRE_POSTGRES=1`` (set by CI), which makes them fail instead.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from agentloom.storage.database import Database

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
BACKENDS = ["sqlite", "postgresql"]


def _admin_url() -> str:
    return os.environ.get("AGENTLOOM_TEST_POSTGRES_URL", DEFAULT_POSTGRES)


def _dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(_dsn(_admin_url()), timeout=5)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session."""
    name = f"agentloom_test_{secrets.token_hex(4)}"
    try:
        asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError) as exc:
        if os.environ.get("AGENTLOOM_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required but not reachable: {exc}")
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    yield make_url(_admin_url()).set(database=name).render_as_string(hide_password=False)
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _empty_tables(url: str) -> None:
    conn = await asyncpg.connect(_dsn(url), timeout=5)
    try:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            " AND tablename <> 'alembic_version'"
        )
        if tables:
            names = ", ".join(f'"{row["tablename"]}"' for row in tables)
            await conn.execute(f"TRUNCATE {names}")
    finally:
        await conn.close()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database URL with empty tables, once per backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'agentloom.db'}"
    url: str = request.getfixturevalue("postgres_url")
    asyncio.run(_empty_tables(url))
    return url


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    db = await Database.connect(database_url, instance_id=f"inst_{secrets.token_hex(8)}")
    await db.migrate()
    await db.heartbeat()
    yield db
    await db.aclose()
