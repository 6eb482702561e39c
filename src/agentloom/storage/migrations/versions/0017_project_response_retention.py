"""A project may keep its stored responses for an age of its own (``response_retention``,
seconds; 0: forever), in place of the server's ``[retention] responses``; none set: the
server's.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("response_retention", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("response_retention")
