"""``INSERT`` statements that can say what to do on a conflict (``ON CONFLICT``), for the
dialect of the connection: SQLite's and PostgreSQL's are the same in SQLAlchemy but two types."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

__all__ = ["insert"]


def insert(conn: Connection, table: sa.Table) -> sqlite.Insert | postgresql.Insert:
    """An ``INSERT`` into ``table`` with ``on_conflict_do_nothing`` / ``on_conflict_do_update``."""
    return sqlite.insert(table) if conn.dialect.name == "sqlite" else postgresql.insert(table)
