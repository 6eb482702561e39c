"""Managed agents (``/v1/managed-agents``): the agents, their messages, their runs and their
tasks, each row a project's.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _project() -> sa.Column[str]:
    return sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default")


def _key() -> list[sa.Column[Any]]:
    return [
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _project(),
    ]


def upgrade() -> None:
    op.create_table(
        "managed_agents",
        *_key(),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("agent_type", sa.String(64), nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("template_id", sa.String(96), nullable=True),
        sa.Column("schedule_id", sa.String(96), nullable=True),
        sa.Column("summary_memory", sa.Text, nullable=False, server_default=""),
        sa.Column("total_runs", sa.Integer, nullable=False, server_default="0"),
        sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("last_run_at", sa.Float, nullable=True),
        sa.Column("last_activity_at", sa.Float, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_managed_agents_project", "managed_agents", ["project_id", "seq"])
    op.create_table(
        "managed_agent_messages",
        *_key(),
        sa.Column("agent_id", sa.String(96), nullable=False),
        sa.Column("direction", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("run_id", sa.String(96), nullable=True),
        sa.Column("tool_calls", sa.Text, nullable=True),
        sa.Column("stop_reason", sa.String(32), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index(
        "ix_managed_agent_messages_agent", "managed_agent_messages", ["agent_id", "seq"]
    )
    op.create_table(
        "managed_agent_runs",
        *_key(),
        sa.Column("agent_id", sa.String(96), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("reply_id", sa.String(96), nullable=True),
        sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float, nullable=True),
        sa.Column("ended_at", sa.Float, nullable=True),
    )
    op.create_index("ix_managed_agent_runs_agent", "managed_agent_runs", ["agent_id", "seq"])
    op.create_table(
        "managed_agent_tasks",
        *_key(),
        sa.Column("agent_id", sa.String(96), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("progress", sa.Text, nullable=False, server_default="{}"),
        sa.Column("findings", sa.Text, nullable=False, server_default="[]"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_managed_agent_tasks_agent", "managed_agent_tasks", ["agent_id", "seq"])


def downgrade() -> None:
    for table in ("managed_agent_tasks", "managed_agent_runs", "managed_agent_messages"):
        op.drop_index(f"ix_{table}_agent", table)
        op.drop_table(table)
    op.drop_index("ix_managed_agents_project", "managed_agents")
    op.drop_table("managed_agents")
