"""The gateway's ledger: usage records carry moderations and what their tokens cost (priced
once, when recorded), a request log keeps one row a request, and spend has its hard limits,
alerts and monthly totals (issue 40).

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

SeqKey = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_USAGE_COLUMNS = (
    ("moderation_requests", sa.Integer),
    ("moderation_tokens", sa.BigInteger),
    ("cost_input", sa.BigInteger),
    ("cost_cached", sa.BigInteger),
    ("cost_output", sa.BigInteger),
    ("cost_embeddings", sa.BigInteger),
)


def upgrade() -> None:
    with op.batch_alter_table("usage_records") as batch:
        for name, kind in _USAGE_COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=False, server_default="0"))
    _request_log()
    _spend()


def _request_log() -> None:
    op.create_table(
        "request_log",
        sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(128), nullable=False),
        sa.Column("project_id", sa.String(96), nullable=False),
        sa.Column("key_id", sa.String(128), nullable=True),
        sa.Column("user", sa.String(256), nullable=True),
        sa.Column("endpoint", sa.String(64), nullable=False),
        sa.Column("model", sa.String(256), nullable=True),
        sa.Column("deployment", sa.String(256), nullable=True),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("cached_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
        sa.Column("cost", sa.BigInteger, nullable=False),
        sa.Column("latency_ms", sa.Float, nullable=False),
        sa.Column("first_token_ms", sa.Float, nullable=True),
        sa.Column("status", sa.Integer, nullable=False),
        sa.Column("error_code", sa.String(128), nullable=True),
        sa.Column("response_id", sa.String(128), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("request_log_id", "request_log", ["id"])
    op.create_index("request_log_created", "request_log", ["created_at"])
    op.create_index("request_log_project", "request_log", ["project_id", "seq"])


def _spend() -> None:
    op.create_table(
        "spend_limits",
        sa.Column("scope", sa.String(96), primary_key=True),
        sa.Column("threshold_amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("interval", sa.String(16), nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_table(
        "spend_alerts",
        sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("scope", sa.String(96), nullable=False),
        sa.Column("threshold_amount", sa.BigInteger, nullable=False),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("interval", sa.String(16), nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("fired_period", sa.BigInteger, nullable=True),
    )
    op.create_index("spend_alerts_scope", "spend_alerts", ["scope", "seq"])
    op.create_table(
        "spend_totals",
        sa.Column("project_id", sa.String(96), primary_key=True),
        sa.Column("period", sa.BigInteger, primary_key=True),
        sa.Column("amount", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("spend_totals")
    op.drop_index("spend_alerts_scope", table_name="spend_alerts")
    op.drop_table("spend_alerts")
    op.drop_table("spend_limits")
    for name in ("request_log_project", "request_log_created", "request_log_id"):
        op.drop_index(name, table_name="request_log")
    op.drop_table("request_log")
    with op.batch_alter_table("usage_records") as batch:
        for name, _ in reversed(_USAGE_COLUMNS):
            batch.drop_column(name)
