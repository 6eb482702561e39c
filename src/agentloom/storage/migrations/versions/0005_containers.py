"""code_interpreter containers.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "containers",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("last_active_at", sa.Float, nullable=False),
        sa.Column("expires_minutes", sa.Integer, nullable=False),
        sa.Column("memory_limit", sa.String(8), nullable=True),
        sa.Column("user_paths", sa.Text, nullable=False),
    )
    op.create_index("ix_containers_last_active_at", "containers", ["last_active_at"])


def downgrade() -> None:
    op.drop_index("ix_containers_last_active_at", "containers")
    op.drop_table("containers")
