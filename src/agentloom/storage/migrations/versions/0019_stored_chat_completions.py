"""Chat completions created with ``store: true``: the answer, the request's messages and the
caller's metadata, each row a project's (``/v1/chat/completions`` list, retrieve, update,
delete, ``/messages``).

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "chat_completions",
        sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default"),
        sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("messages", sa.Text, nullable=False),
    )
    op.create_index("ix_chat_completions_project_seq", "chat_completions", ["project_id", "seq"])


def downgrade() -> None:
    op.drop_table("chat_completions")
