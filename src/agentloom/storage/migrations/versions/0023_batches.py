"""The Batch API: ``batches`` (a project's batches, their status, counts and files) and
``batch_results`` (each ended request of a batch, by its input line).

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TIMES = ("in_progress_at", "finalizing_at", "completed_at", "failed_at", "expired_at")
_COUNTS = ("total", "completed", "failed")
_TOKENS = ("input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens")


def _project() -> sa.Column[str]:
    return sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default")


def upgrade() -> None:
    op.create_table(
        "batches",
        _project(),
        sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("endpoint", sa.String(64), nullable=False),
        sa.Column("input_file_id", sa.String(128), nullable=False),
        sa.Column("completion_window", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("metadata", sa.Text, nullable=True),
        sa.Column("output_expires_after", sa.Integer, nullable=True),
        sa.Column("model", sa.String(256), nullable=True),
        sa.Column("errors", sa.Text, nullable=True),
        sa.Column("output_file_id", sa.String(128), nullable=True),
        sa.Column("error_file_id", sa.String(128), nullable=True),
        sa.Column("expires_at", sa.Float, nullable=False),
        *(sa.Column(name, sa.Float, nullable=True) for name in _TIMES),
        sa.Column("cancelling_at", sa.Float, nullable=True),
        sa.Column("cancelled_at", sa.Float, nullable=True),
        *(sa.Column(name, sa.Integer, nullable=False, server_default="0") for name in _COUNTS),
        *(sa.Column(name, sa.BigInteger, nullable=False, server_default="0") for name in _TOKENS),
    )
    op.create_index("ix_batches_project_seq", "batches", ["project_id", "seq"])
    op.create_table(
        "batch_results",
        _project(),
        sa.Column("batch_id", sa.String(96), primary_key=True),
        sa.Column("line", sa.Integer, primary_key=True),
        sa.Column("failed", sa.Boolean, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("batch_results")
    op.drop_table("batches")
