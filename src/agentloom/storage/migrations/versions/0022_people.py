"""People, not only keys: the organization's users, invites, groups and roles, who is in which
project, and which role each holds where; an API key is a service account's or a user's, and
may be restricted to scopes. (The predefined roles are made at start, as the default project
is: :meth:`agentloom.storage.roles.SqlRoleStore.ensure_predefined`.)

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _seq() -> sa.Column[int]:
    return sa.Column("seq", _SEQ, primary_key=True, autoincrement=True)


def _fk(name: str, target: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(
        name, sa.String(96), sa.ForeignKey(f"{target}.id", ondelete="CASCADE"), nullable=nullable
    )


def upgrade() -> None:
    op.create_table(
        "users",
        _seq(),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("email", sa.String(320), nullable=False, unique=True),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("added_at", sa.Float, nullable=False),
    )
    op.create_table(
        "invites",
        _seq(),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("projects", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("accepted_at", sa.Float, nullable=True),
    )
    op.create_table(
        "groups",
        _seq(),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "group_users",
        _seq(),
        _fk("group_id", "groups"),
        _fk("user_id", "users"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("group_id", "user_id", name="uq_group_users"),
    )
    op.create_index("ix_group_users_user", "group_users", ["user_id"])
    op.create_table(
        "roles",
        _seq(),
        sa.Column("id", sa.String(96), nullable=False, unique=True),
        _fk("project_id", "projects", nullable=True),
        sa.Column("resource_type", sa.String(32), nullable=False),
        sa.Column("name", sa.String(256), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("permissions", sa.Text, nullable=False),
        sa.Column("predefined", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_table(
        "project_members",
        _seq(),
        _fk("project_id", "projects"),
        sa.Column("principal_type", sa.String(16), nullable=False),
        sa.Column("principal_id", sa.String(96), nullable=False),
        sa.Column("role", sa.String(96), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint(
            "project_id", "principal_type", "principal_id", name="uq_project_members"
        ),
    )
    op.create_index("ix_project_members_principal", "project_members", ["principal_id"])
    op.create_table(
        "role_assignments",
        _seq(),
        _fk("role_id", "roles"),
        sa.Column("principal_type", sa.String(16), nullable=False),
        sa.Column("principal_id", sa.String(96), nullable=False),
        _fk("project_id", "projects", nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_role_assignments_principal", "role_assignments", ["principal_id"])
    with op.batch_alter_table("api_keys") as batch:
        batch.alter_column("service_account_id", existing_type=sa.String(96), nullable=True)
        batch.add_column(sa.Column("user_id", sa.String(96), nullable=True))
        batch.add_column(sa.Column("scopes", sa.Text, nullable=True))
        batch.create_foreign_key(
            "fk_api_keys_user", "users", ["user_id"], ["id"], ondelete="CASCADE"
        )
    with op.batch_alter_table("audit_logs") as batch:
        batch.add_column(sa.Column("actor_user_id", sa.String(96), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_logs") as batch:
        batch.drop_column("actor_user_id")
    op.execute("DELETE FROM api_keys WHERE user_id IS NOT NULL")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_constraint("fk_api_keys_user", type_="foreignkey")
        batch.drop_column("scopes")
        batch.drop_column("user_id")
        batch.alter_column("service_account_id", existing_type=sa.String(96), nullable=False)
    for table in ("role_assignments", "project_members", "roles", "group_users", "groups"):
        op.drop_table(table)
    op.drop_table("invites")
    op.drop_table("users")
