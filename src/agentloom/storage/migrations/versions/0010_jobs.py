"""Durable jobs and the stored events of background responses.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _project() -> sa.Column[str]:
    return sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default")


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _project(),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(96), nullable=False),
        sa.Column("key_id", sa.String(128), nullable=True),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("claimed_by", sa.String(96), nullable=True),
        sa.Column("lease_until", sa.Float, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("irreversible", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_jobs_status_seq", "jobs", ["status", "seq"])
    op.create_index("ix_jobs_subject", "jobs", ["subject"])
    op.create_table(
        "response_events",
        sa.Column("response_id", sa.String(96), primary_key=True),
        sa.Column("sequence_number", sa.Integer, primary_key=True),
        _project(),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("response_events")
    op.drop_index("ix_jobs_subject", "jobs")
    op.drop_index("ix_jobs_status_seq", "jobs")
    op.drop_table("jobs")
