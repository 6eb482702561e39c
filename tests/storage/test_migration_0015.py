"""Migration 0015 makes the jobs' claim index and ``job_queues`` as ``schema.py`` describes them,
and goes down as it came up."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from agentloom.storage import schema
from agentloom.storage.database import Database
from tests.storage.test_managed_agent_schema import _migrate

TABLES = {"jobs", "job_queues"}

pytestmark = pytest.mark.both_databases


def _differences(conn: sa.Connection) -> list[object]:
    context = MigrationContext.configure(conn, opts={"compare_type": True})
    return [d for d in compare_metadata(context, schema.metadata) if _about_jobs(d)]


def _about_jobs(difference: object) -> bool:
    if isinstance(difference, list):
        return any(_about_jobs(d) for d in difference)
    assert isinstance(difference, tuple)
    return any(_named(part) in TABLES for part in difference)


def _named(part: object) -> object:
    table = getattr(part, "table", None)  # an index: its table
    return getattr(table, "name", None) or getattr(part, "name", None) or part


async def test_the_migration_matches_the_schema(database: Database) -> None:
    assert await database.runner.read(_differences) == []


def test_the_migration_goes_down_and_up_again(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'jobs.db'}")
    _migrate(engine, "head")
    _migrate(engine, "0014", down=True)
    down = _made(engine)
    _migrate(engine, "head")
    up = _made(engine)
    engine.dispose()

    assert not {"job_queues", "ix_jobs_claim"} & down
    assert {"job_queues", "ix_jobs_claim"} <= up


def _made(engine: sa.Engine) -> set[str]:
    """The tables, and the jobs' indexes."""
    inspector = sa.inspect(engine)
    indexes = {str(index["name"]) for index in inspector.get_indexes("jobs")}
    return set(inspector.get_table_names()) | indexes
