"""Webhook endpoints and deliveries; schedules; jobs that wait (``run_after``); vector store
files waiting to be ingested get the jobs that now ingest them.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _project() -> sa.Column[str]:
    return sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default")


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("run_after", sa.Float, nullable=True))
        # a vector store file's job is named by the store and the file: longer than an id
        batch.alter_column("subject", type_=sa.String(200), existing_nullable=False)
    op.create_table(
        "webhook_endpoints",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _project(),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("event_types", sa.Text, nullable=False),
        sa.Column("secret", sa.Text, nullable=False),
        sa.Column("secret_hint", sa.String(32), nullable=False),
        sa.Column("old_secret", sa.Text, nullable=True),
        sa.Column("old_secret_until", sa.Float, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_index("ix_webhook_endpoints_project", "webhook_endpoints", ["project_id", "seq"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _project(),
        sa.Column("endpoint_id", sa.String(96), nullable=False),
        sa.Column("event_id", sa.String(96), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Text, nullable=False, server_default="[]"),
        sa.Column("next_attempt_at", sa.Float, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("ended_at", sa.Float, nullable=True),
    )
    op.create_index("ix_webhook_deliveries_endpoint", "webhook_deliveries", ["endpoint_id", "seq"])
    op.create_table(
        "schedules",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _project(),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("every", sa.Float, nullable=True),
        sa.Column("cron", sa.String(256), nullable=True),
        sa.Column("next_run_at", sa.Float, nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("last_job_id", sa.String(96), nullable=True),
        sa.Column("runs", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_schedules_next_run_at", "schedules", ["next_run_at"])
    op.create_index("ix_schedules_subject", "schedules", ["subject"])
    op.execute(_INGESTION_JOBS)


# One job per file still in progress (ingestion was claimed from the files' rows before).
_INGESTION_JOBS = """
INSERT INTO jobs (id, project_id, kind, subject, payload, status, created_at)
SELECT 'job_ingest_' || CAST(f.seq AS TEXT), s.project_id, 'ingest',
       f.vector_store_id || '/' || f.file_id, '{}', 'queued', f.created_at
FROM vector_store_files f JOIN vector_stores s ON s.id = f.vector_store_id
WHERE f.status = 'in_progress'
"""


def downgrade() -> None:
    op.drop_index("ix_schedules_subject", "schedules")
    op.drop_index("ix_schedules_next_run_at", "schedules")
    op.drop_table("schedules")
    op.drop_index("ix_webhook_deliveries_endpoint", "webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_webhook_endpoints_project", "webhook_endpoints")
    op.drop_table("webhook_endpoints")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("run_after")
