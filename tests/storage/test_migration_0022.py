"""Migration 0022 makes the people's tables (users, invites, groups, roles, memberships and
assignments) and the keys' and audit log's new columns as ``schema.py`` describes them, and
goes down as it came up."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from agentloom.storage import schema
from agentloom.storage.database import Database
from tests.storage.test_managed_agent_schema import _migrate

PEOPLE = {"users", "invites", "groups", "group_users", "roles", "project_members"}
TABLES = PEOPLE | {"role_assignments", "api_keys", "audit_logs"}

pytestmark = pytest.mark.both_databases


def _differences(conn: sa.Connection) -> list[object]:
    context = MigrationContext.configure(conn, opts={"compare_type": True})
    return [d for d in compare_metadata(context, schema.metadata) if _about(d)]


def _about(difference: object) -> bool:
    if isinstance(difference, list):
        return any(_about(d) for d in difference)
    assert isinstance(difference, tuple)
    return any(_named(part) in TABLES for part in difference)


def _named(part: object) -> object:
    table = getattr(part, "table", None)  # an index or a column: its table
    return getattr(table, "name", None) or getattr(part, "name", None) or part


async def test_the_migration_matches_the_schema(database: Database) -> None:
    assert await database.runner.read(_differences) == []


def test_the_migration_goes_down_and_up_again(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'people.db'}")
    _migrate(engine, "head")
    _migrate(engine, "0021", down=True)
    down = _made(engine)
    _migrate(engine, "head")
    up = _made(engine)
    engine.dispose()

    assert not PEOPLE & down
    assert "user_id" not in down
    assert PEOPLE | {"api_keys.user_id", "api_keys.scopes"} <= up


def _made(engine: sa.Engine) -> set[str]:
    """The tables, and the keys' columns (as ``api_keys.<name>``)."""
    inspector = sa.inspect(engine)
    columns = {f"api_keys.{c['name']}" for c in inspector.get_columns("api_keys")}
    return set(inspector.get_table_names()) | columns
