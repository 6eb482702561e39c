"""Vector stores, their files, file batches and chunks.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _store_key() -> sa.Column[str]:
    return sa.Column(
        "vector_store_id",
        sa.String(96),
        sa.ForeignKey("vector_stores.id", ondelete="CASCADE"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "vector_stores",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("expires_after", sa.Text, nullable=True),
        sa.Column("expires_at", sa.Float, nullable=True),
        sa.Column("last_active_at", sa.Float, nullable=False),
        sa.Column("embedder", sa.String(256), nullable=False),
        sa.Column("dimensions", sa.Integer, nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_table(
        "vector_store_files",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        _store_key(),
        sa.Column("file_id", sa.String(96), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("attributes", sa.Text, nullable=False),
        sa.Column("chunking_strategy", sa.Text, nullable=False),
        sa.Column("batch_id", sa.String(96), nullable=True),
        sa.Column("usage_bytes", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("claimed_by", sa.String(96), nullable=True),
        sa.Column("claimed_at", sa.Float, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.UniqueConstraint("vector_store_id", "file_id", name="uq_vector_store_files_store_file"),
    )
    op.create_index(
        "ix_vector_store_files_store_seq", "vector_store_files", ["vector_store_id", "seq"]
    )
    op.create_index("ix_vector_store_files_batch_seq", "vector_store_files", ["batch_id", "seq"])
    op.create_index("ix_vector_store_files_file", "vector_store_files", ["file_id"])
    op.create_index("ix_vector_store_files_status", "vector_store_files", ["status"])
    op.create_table(
        "vector_store_file_batches",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _store_key(),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("cancelled", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "vector_store_chunks",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        _store_key(),
        sa.Column("file_id", sa.String(96), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sqlite_autoincrement=True,  # a seq is never reused: indexes load chunks past one
    )
    op.create_index(
        "ix_vector_store_chunks_store_seq", "vector_store_chunks", ["vector_store_id", "seq"]
    )
    op.create_index(
        "ix_vector_store_chunks_store_file", "vector_store_chunks", ["vector_store_id", "file_id"]
    )


def downgrade() -> None:
    op.drop_table("vector_store_chunks")
    op.drop_table("vector_store_file_batches")
    op.drop_table("vector_store_files")
    op.drop_table("vector_stores")
