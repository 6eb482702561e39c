"""The managed agents' tables migration 0013 creates are the ones ``schema.py`` describes, each a
project's (listed in ``schema.OWNED``), and the migration goes down as it came up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from agentloom.storage import schema
from agentloom.storage.database import MIGRATIONS, Database

TABLES = {table.name for table in schema.MANAGED_AGENT_TABLES}


def _migrate(engine: sa.Engine, target: str, *, down: bool = False) -> None:
    script = ScriptDirectory(str(MIGRATIONS))

    def steps(revision: Any, _context: MigrationContext) -> Any:
        if down:
            return script._downgrade_revs(target, revision)
        return script._upgrade_revs(target, revision)

    with engine.begin() as conn:
        context = MigrationContext.configure(conn, opts={"script": script, "fn": steps})
        with Operations.context(context):
            context.run_migrations()


def _differences(conn: Connection) -> list[Any]:
    context = MigrationContext.configure(conn, opts={"compare_type": True})
    return [d for d in compare_metadata(context, schema.metadata) if _mine(d)]


def _mine(difference: Any) -> bool:
    """Whether a difference (a tuple, or a list of column changes) is about our tables."""
    if isinstance(difference, list):
        return any(_mine(d) for d in difference)
    return any(getattr(part, "name", None) in TABLES or part in TABLES for part in difference)


async def test_the_migration_matches_the_schema(database: Database) -> None:
    assert await database.runner.read(_differences) == []
    assert all("project_id" in t.c and t in schema.OWNED for t in schema.MANAGED_AGENT_TABLES)


def test_the_migration_goes_down_and_up_again(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'agents.db'}")
    _migrate(engine, "head")
    _migrate(engine, "0012", down=True)
    down = set(sa.inspect(engine).get_table_names())
    _migrate(engine, "head")
    up = set(sa.inspect(engine).get_table_names())
    engine.dispose()

    assert not TABLES & down
    assert up >= TABLES
