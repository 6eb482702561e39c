"""Jobs are claimed fairly between projects, in a pool per kind: an index over queued and running
jobs by kind and project (oldest first, with when each is due) keeps that claim cheap, and
``job_queues`` keeps when each project's queue of a kind was last served (claims go round them).

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_jobs_claim", "jobs", ["status", "kind", "project_id", "seq", "run_after"])
    op.create_table(
        "job_queues",
        sa.Column("kind", sa.String(32), primary_key=True),
        sa.Column("project_id", sa.String(96), primary_key=True),
        sa.Column("served_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("job_queues")
    op.drop_index("ix_jobs_claim", table_name="jobs")
