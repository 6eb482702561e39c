"""Traces the Agents SDK exports to ``POST /v1/traces/ingest``: each trace and each span a row,
a project's, the span's exported object kept whole (``/v1/traces`` list and retrieve).

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _project() -> sa.Column[str]:
    return sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default")


def upgrade() -> None:
    op.create_table(
        "sdk_traces",
        _project(),
        sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("workflow_name", sa.String(512), nullable=True),
        sa.Column("group_id", sa.String(256), nullable=True),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.UniqueConstraint("project_id", "id", name="uq_sdk_traces_project_id"),
    )
    op.create_index("ix_sdk_traces_project_seq", "sdk_traces", ["project_id", "seq"])
    op.create_table(
        "sdk_spans",
        _project(),
        sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False),
        sa.Column("trace_id", sa.String(96), nullable=False),
        sa.Column("response_id", sa.String(96), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.UniqueConstraint("project_id", "id", name="uq_sdk_spans_project_id"),
    )
    op.create_index("ix_sdk_spans_project_trace", "sdk_spans", ["project_id", "trace_id"])
    op.create_index("ix_sdk_spans_project_response", "sdk_spans", ["project_id", "response_id"])


def downgrade() -> None:
    op.drop_table("sdk_spans")
    op.drop_table("sdk_traces")
