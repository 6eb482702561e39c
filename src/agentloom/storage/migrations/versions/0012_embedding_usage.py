"""Usage records count embeddings requests and their tokens apart from model calls, for
``/v1/organization/usage/embeddings``.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("usage_records") as batch:
        batch.add_column(
            sa.Column("embedding_requests", sa.Integer, nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("embedding_tokens", sa.BigInteger, nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("usage_records") as batch:
        batch.drop_column("embedding_tokens")
        batch.drop_column("embedding_requests")
