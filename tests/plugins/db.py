"""Database fixtures: the tests whose outcome depends on the storage run on SQLite and on
PostgreSQL, the rest on SQLite.

Which tests run on both, and the check that keeps that honest, are :mod:`tests.plugins.split`'s.

Each test starts from a migrated database with empty tables, without paying for the migrations:
on SQLite a copy of a file migrated once a session (a copy takes ~1 ms, the 25 migrations
~150 ms); on PostgreSQL the session's own database, migrated once, its rows deleted
between tests in one round trip (~2 ms; ``TRUNCATE`` of its 34 tables took ~190 ms and a
``CREATE DATABASE ... TEMPLATE`` ~160 ms).

PostgreSQL comes from ``AGENTLOOM_TEST_POSTGRES_URL`` (default: the local server's ``test``
database). Each test session (each xdist worker) creates its own database there and drops it at
the end. Without a reachable server the PostgreSQL cases are skipped, unless
``AGENTLOOM_REQUIRE_POSTGRES=1`` (set by CI), which makes them fail instead.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from agentloom.storage import schema
from agentloom.storage.database import Database
from tests.plugins.split import covering

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


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
    url = make_url(_admin_url()).set(database=name).render_as_string(hide_password=False)
    asyncio.run(_migrated(url))
    yield url
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# Every table of the schema, those referring to others first, so one pass deletes every row.
_DELETE_ALL = ";".join(f'DELETE FROM "{t.name}"' for t in reversed(schema.metadata.sorted_tables))


async def _empty_tables(url: str) -> None:
    conn = await asyncpg.connect(_dsn(url), timeout=5)
    try:
        await conn.execute(_DELETE_ALL)
    finally:
        await conn.close()


async def _migrated(url: str) -> None:
    db = await Database.connect(url, instance_id=f"inst_{secrets.token_hex(8)}")
    try:
        await db.migrate()
    finally:
        await db.aclose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the head revision, for each test to copy."""
    path = tmp_path_factory.mktemp("template") / "agentloom.db"
    with covering("the migrations"):  # the same ones the PostgreSQL session database runs
        asyncio.run(_migrated(f"sqlite:///{path}"))
    assert not path.with_name(path.name + "-wal").exists(), "the template is one whole file"
    return path


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated database URL with empty tables, on the backend the test was given."""
    if request.param == "sqlite":
        path = tmp_path / "agentloom.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
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
