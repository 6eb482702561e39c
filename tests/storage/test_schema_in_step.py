"""The tables the code declares (:mod:`agentloom.storage.schema`) are the tables the migrations
make: the same tables, columns and indexes, on SQLite and PostgreSQL (a declared index the
migrations never made would be a list that walks every project's rows; one made but not
declared, a query planned for an index nobody knows about)."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection

from agentloom.storage import schema
from agentloom.storage.database import Database


def _differences(conn: Connection) -> list[Any]:
    context = MigrationContext.configure(conn, opts={"compare_type": False})
    return list(compare_metadata(context, schema.metadata))


async def test_the_declared_schema_is_the_migrated_one(database: Database) -> None:
    differences = await database.runner.read(_differences)

    assert differences == []
