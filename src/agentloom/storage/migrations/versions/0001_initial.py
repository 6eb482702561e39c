"""Responses, their items, and the live server instances.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "responses",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("previous_response_id", sa.String(96), nullable=True),
        sa.Column("instance_id", sa.String(96), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("ix_responses_model_seq", "responses", ["model", "seq"])
    op.create_index("ix_responses_status", "responses", ["status"])
    op.create_table(
        "items",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False),
        sa.Column(
            "response_id",
            sa.String(96),
            sa.ForeignKey("responses.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("kind", sa.SmallInteger, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("ix_items_response", "items", ["response_id", "kind", "position"])
    op.create_index("ix_items_id", "items", ["id"])
    op.create_table(
        "instances",
        sa.Column("id", sa.String(96), primary_key=True),
        sa.Column("heartbeat_at", sa.Float, nullable=False),
        sa.Column("host", sa.String(255), nullable=True),
        sa.Column("pid", sa.Integer, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("instances")
    op.drop_table("items")
    op.drop_table("responses")
