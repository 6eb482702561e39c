"""PostgreSQL's runner: its pools (kept, not churned) and its hot path on asyncpg (SQLite's:
test_sqlite_runner.py)."""

from __future__ import annotations

import asyncio
import datetime
import json
import os

import asyncpg

from agentloom.storage import schema
from agentloom.storage.base import ResponseRow
from agentloom.storage.database import Database, _pg_connect_args, driver_url
from agentloom.storage.runner import scalar_count

# --- PostgreSQL: pools kept, the hot path on asyncpg ------------------------------------------


def test_local_postgres_skips_tls_unless_asked() -> None:
    def args(url: str) -> dict[str, object]:
        return _pg_connect_args(driver_url(url))

    assert args("postgresql://u@127.0.0.1:5432/d") == {"ssl": False}
    assert args("postgresql://u@localhost/d") == {"ssl": False}
    assert args("postgresql:///d?host=/var/run/postgresql") == {"ssl": False}
    assert args("postgresql://u@127.0.0.1/d?sslmode=require") == {}
    assert args("postgresql://u@db.example.com/d") == {}  # asyncpg's default: try TLS


async def _opened_since(admin: asyncpg.Connection, start: datetime.datetime) -> int:
    """Connections to this database opened since ``start``, open or not (their pids differ)."""
    query = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND backend_start > $1 AND pid <> pg_backend_pid()"
    )
    return int(await admin.fetchval(query, start))


async def test_postgres_keeps_its_connections_under_load(postgres_url: str) -> None:
    """64 concurrent stored responses, three times over: the pools open what the load needs
    once and keep it (no connection opened and closed per request), within ``3 * pool_size``."""
    dsn = driver_url(postgres_url).set(drivername="postgresql")
    admin = await asyncpg.connect(dsn.render_as_string(hide_password=False))
    start = await admin.fetchval("SELECT now()")
    db = await Database.connect(postgres_url, instance_id="inst_churn", pool_size=8)
    try:
        await db.migrate()
        opened: list[int] = []
        for round_ in range(3):
            rows = [_row(f"resp_churn{round_}_{n}_{os.getpid()}") for n in range(64)]
            await asyncio.gather(*(db.responses.save(row, [], []) for row in rows))
            opened.append(await _opened_since(admin, start))
        assert 1 <= opened[0] <= 3 * 8
        assert opened[0] == opened[1] == opened[2]  # kept: none opened again
        assert await db.runner.read(scalar_count(schema.responses)) >= 3 * 64
        assert await _last_queries(admin, start)  # the pools' connections, idle
        assert not [q for q in await _last_queries(admin, start) if "RESET ALL" in q]
    finally:
        await admin.close()
        await db.aclose()


async def _last_queries(admin: asyncpg.Connection, start: datetime.datetime) -> list[str]:
    """The last statement of each connection opened since ``start``: a connection returned to
    the hot path's pool is not reset with a round trip of its own (``RESET ALL; ...``)."""
    query = (
        "SELECT query FROM pg_stat_activity WHERE backend_start >= $1"
        " AND pid <> pg_backend_pid() AND datname = current_database()"
    )
    return [str(row["query"]) for row in await admin.fetch(query, start)]


def _row(rid: str) -> ResponseRow:
    body = json.dumps({"id": rid, "status": "completed", "model": "m"})
    return ResponseRow(rid, 1700000000.0, "m", "completed", None, body)
