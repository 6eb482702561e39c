"""A vector store file being ingested says how far it has got: the chunks its text was cut into
(``chunks_total``, unknown until it is cut) and how many of them are embedded so far
(``chunks_embedded``), written by the ingester between batches.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("vector_store_files") as batch:
        batch.add_column(sa.Column("chunks_total", sa.Integer, nullable=True))
        batch.add_column(
            sa.Column("chunks_embedded", sa.Integer, nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("vector_store_files") as batch:
        batch.drop_column("chunks_embedded")
        batch.drop_column("chunks_total")
