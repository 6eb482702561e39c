"""MCP connectors a project configures once (``/v1/mcp_connectors``): the server's URL and its
credentials, sealed; an ``mcp`` tool with ``connector_id`` uses them.

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "mcp_connectors",
        sa.Column("project_id", sa.String(96), nullable=False, server_default="proj_default"),
        sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("server_url", sa.Text, nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("credentials", sa.Text, nullable=False),
        sa.UniqueConstraint("project_id", "id", name="uq_mcp_connectors_project_id"),
    )


def downgrade() -> None:
    op.drop_table("mcp_connectors")
