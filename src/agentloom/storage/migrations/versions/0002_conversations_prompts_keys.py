"""Conversations and their items, reusable prompts, sealing keys.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("version", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lock_response_id", sa.String(96), nullable=True),
        sa.Column("lock_instance_id", sa.String(96), nullable=True),
        sa.Column("lock_at", sa.Float, nullable=True),
    )
    op.create_table(
        "conversation_items",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column(
            "conversation_id",
            sa.String(96),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("response_id", sa.String(96), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index(
        "ix_conversation_items_conversation_seq",
        "conversation_items",
        ["conversation_id", "seq"],
    )
    op.create_table(
        "prompts",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("is_default", sa.Boolean, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.UniqueConstraint("id", "version", name="uq_prompts_id_version"),
    )
    op.create_table(
        "sealing_keys",
        sa.Column("kid", sa.String(32), primary_key=True),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sealing_keys")
    op.drop_table("prompts")
    op.drop_index("ix_conversation_items_conversation_seq", "conversation_items")
    op.drop_table("conversation_items")
    op.drop_table("conversations")
