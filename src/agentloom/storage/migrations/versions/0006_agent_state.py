"""The agent SDK's state: sessions, tick records, memory notes.

Before this revision the SDK kept them in SQLite files of its own (``agents.db``,
``memory.db``) with no ``alembic_version`` table; on such a file every earlier revision runs
(their tables are new to it) and this one adds only the tables and indexes it lacks, so the
rows already there stay as they are. Names and SQLite types are the ones those files used.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_seconds = sa.Float().with_variant(sa.REAL(), "sqlite")


def _agent_sessions() -> None:
    op.create_table(
        "agent_sessions",
        sa.Column("agent", sa.Text, primary_key=True),
        sa.Column("session_id", sa.Text, primary_key=True),
        sa.Column("history", sa.Text, nullable=False, server_default="[]"),
        sa.Column("state", sa.Text, nullable=False, server_default="{}"),
        sa.Column("updated_at", _seconds, nullable=False),
    )


def _agent_ticks() -> None:
    op.create_table(
        "agent_ticks",
        sa.Column("id", _seq, primary_key=True, autoincrement=True),
        sa.Column("agent", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("started_at", _seconds, nullable=False),
        sa.Column("finished_at", _seconds, nullable=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("summary", sa.Text, nullable=False, server_default=""),
        sqlite_autoincrement=True,
    )


def _memories() -> None:
    op.create_table(
        "memories",
        sa.Column("id", _seq, primary_key=True, autoincrement=True),
        sa.Column("namespace", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("terms", sa.Text, nullable=False),
        sa.Column("created_at", _seconds, nullable=False),
        sqlite_autoincrement=True,
    )


_TABLES = {"agent_sessions": _agent_sessions, "agent_ticks": _agent_ticks, "memories": _memories}
_INDEXES = {
    "agent_ticks_session": ("agent_ticks", ["agent", "session_id", "id"]),
    "memories_namespace": ("memories", ["namespace", "id"]),
}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    existing = set(inspector.get_table_names())
    for name, create in _TABLES.items():
        if name not in existing:
            create()
    indexed = {
        index["name"]
        for table in existing & _TABLES.keys()
        for index in inspector.get_indexes(table)
    }
    for name, (table, columns) in _INDEXES.items():
        if name not in indexed:
            op.create_index(name, table, columns)


def downgrade() -> None:
    for name, (table, _) in _INDEXES.items():
        op.drop_index(name, table)
    for table in reversed(list(_TABLES)):
        op.drop_table(table)
