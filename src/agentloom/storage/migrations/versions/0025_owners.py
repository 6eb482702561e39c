"""Stored objects record their owner (the user or service account behind the key), and a project
may hold access rules on them (issue 41): ``owner`` on the tables of the objects people create,
``access_rules`` (JSON) on ``projects``. Rows from before have no owner.

Revision ID: 0025
Revises: 0024
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

OWNED = (
    "responses",
    "conversations",
    "files",
    "vector_stores",
    "containers",
    "prompts",
    "chat_completions",
    "batches",
    "managed_agents",
    "jobs",  # whose the work is: what a background job makes is theirs
)


def upgrade() -> None:
    for table in OWNED:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("owner", sa.String(96), nullable=True))
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("access_rules", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("access_rules")
    for table in reversed(OWNED):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("owner")
