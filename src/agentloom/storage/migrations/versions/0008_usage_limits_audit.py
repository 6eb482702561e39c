"""Usage records, rate limits and their windows, audit logs.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "usage_records",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("minute", sa.BigInteger, nullable=False),
        sa.Column("project_id", sa.String(96), nullable=False),
        sa.Column("key_id", sa.String(128), nullable=True),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("cached_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
        sa.Column("reasoning_tokens", sa.BigInteger, nullable=False),
        sa.Column("file_search_calls", sa.Integer, nullable=False),
        sa.Column("web_search_calls", sa.Integer, nullable=False),
        sa.Column("code_interpreter_sessions", sa.Integer, nullable=False),
        sa.Column("mcp_calls", sa.Integer, nullable=False),
    )
    op.create_index("ix_usage_records_minute", "usage_records", ["minute"])
    op.create_table(
        "rate_limits",
        sa.Column("project_id", sa.String(96), primary_key=True),
        sa.Column("model", sa.String(256), primary_key=True),
        sa.Column("max_requests_per_1_minute", sa.Integer, nullable=False),
        sa.Column("max_tokens_per_1_minute", sa.Integer, nullable=False),
        sa.Column("max_requests_per_1_day", sa.Integer, nullable=False),
    )
    op.create_table(
        "rate_windows",
        sa.Column("project_id", sa.String(96), primary_key=True),
        sa.Column("model", sa.String(256), primary_key=True),
        sa.Column("window", sa.String(1), primary_key=True),
        sa.Column("start", sa.BigInteger, primary_key=True),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("tokens", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "audit_logs",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("effective_at", sa.Float, nullable=False),
        sa.Column("project_id", sa.String(96), nullable=True),
        sa.Column("actor_id", sa.String(128), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("ix_audit_logs_effective_at", "audit_logs", ["effective_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_logs_effective_at", "audit_logs")
    op.drop_table("audit_logs")
    op.drop_table("rate_windows")
    op.drop_table("rate_limits")
    op.drop_index("ix_usage_records_minute", "usage_records")
    op.drop_table("usage_records")
