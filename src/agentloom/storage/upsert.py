"""``INSERT`` statements that can say what to do on a conflict (``ON CONFLICT``), for the
dialect of the connection: SQLite's and PostgreSQL's are the same in SQLAlchemy but two types.
Each dialect's module is imported by its first statement: a SQLite server never loads
PostgreSQL's (~0.1 s of its start)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

__all__ = ["insert"]


def insert(conn: Connection, table: sa.Table) -> sqlite.Insert | postgresql.Insert:
    """An ``INSERT`` into ``table`` with ``on_conflict_do_nothing`` / ``on_conflict_do_update``."""
    if conn.dialect.name == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(table)
    from sqlalchemy.dialects import postgresql

    return postgresql.insert(table)
