"""Projects, service accounts and API keys; every owned table gets its ``project_id``.

Rows written before this migration belong to the default project, which it creates.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import secrets
import time

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_DEFAULT = "proj_default"
# Owned tables, and the column their lists are ordered by (an index beside the project).
_OWNED = {
    "responses": "seq",
    "items": None,
    "conversations": "seq",
    "conversation_items": None,
    "prompts": "seq",
    "files": "seq",
    "vector_stores": "seq",
    "containers": "seq",
}


def upgrade() -> None:
    projects = op.create_table(
        "projects",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("archived_at", sa.Float, nullable=True),
        sa.Column("model_policy", sa.Text, nullable=True),
        sa.Column("tool_policy", sa.Text, nullable=True),
    )
    op.create_table(
        "service_accounts",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column(
            "project_id",
            sa.String(96),
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_service_accounts_project_seq", "service_accounts", ["project_id", "seq"])
    op.create_table(
        "api_keys",
        sa.Column("seq", _seq, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column(
            "project_id",
            sa.String(96),
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "service_account_id",
            sa.String(96),
            sa.ForeignKey("service_accounts.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("redacted", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=True),
        sa.Column("last_used_at", sa.Float, nullable=True),
    )
    op.create_index("ix_api_keys_project_seq", "api_keys", ["project_id", "seq"])
    state = op.create_table(
        "auth_state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("epoch", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(
        projects, [{"id": _DEFAULT, "name": "Default project", "created_at": time.time()}]
    )
    op.bulk_insert(state, [{"id": 1, "secret": secrets.token_urlsafe(48), "epoch": 0}])
    for table, ordered_by in _OWNED.items():
        column = sa.Column("project_id", sa.String(96), nullable=False, server_default=_DEFAULT)
        op.add_column(table, column)
        if ordered_by is not None:
            op.create_index(f"ix_{table}_project_seq", table, ["project_id", ordered_by])


def downgrade() -> None:
    for table, ordered_by in _OWNED.items():
        if ordered_by is not None:
            op.drop_index(f"ix_{table}_project_seq", table)
        op.drop_column(table, "project_id")
    op.drop_table("auth_state")
    op.drop_index("ix_api_keys_project_seq", "api_keys")
    op.drop_table("api_keys")
    op.drop_index("ix_service_accounts_project_seq", "service_accounts")
    op.drop_table("service_accounts")
    op.drop_table("projects")
