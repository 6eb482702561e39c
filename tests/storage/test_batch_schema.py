"""The Batch API's tables the migration creates are the ones ``schema.py`` describes, each a
project's."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from agentloom.storage import schema
from agentloom.storage.database import Database

TABLES = {"batches", "batch_results"}


def _differences(conn: Connection) -> list[Any]:
    context = MigrationContext.configure(conn, opts={"compare_type": True})
    return [d for d in compare_metadata(context, schema.metadata) if _mine(d)]


def _mine(difference: Any) -> bool:
    """Whether a difference (a tuple, or a list of column changes) is about our tables."""
    if isinstance(difference, list):
        return any(_mine(d) for d in difference)
    return any(getattr(part, "name", None) in TABLES or part in TABLES for part in difference)


async def test_the_migration_matches_the_schema(database: Database) -> None:
    differences = await database.runner.read(_differences)

    assert differences == []


def test_the_tables_are_owned_by_projects() -> None:
    assert {schema.batches, schema.batch_results} <= set(schema.OWNED)
