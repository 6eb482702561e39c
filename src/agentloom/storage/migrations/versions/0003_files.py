"""Uploaded files (the Files API).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "files",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("filename", sa.String(512), nullable=False),
        sa.Column("purpose", sa.String(32), nullable=False),
        sa.Column("bytes", sa.BigInteger, nullable=False),
        sa.Column("content_type", sa.String(128), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=True),
        sa.Column("blob_key", sa.String(255), nullable=False),
    )
    op.create_index("ix_files_purpose_seq", "files", ["purpose", "seq"])
    op.create_index("ix_files_expires_at", "files", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_files_expires_at", "files")
    op.drop_index("ix_files_purpose_seq", "files")
    op.drop_table("files")
