"""The people of the organization: users, invites, groups, roles and who holds which role where
(part of :mod:`agentloom.storage.schema`, which names every table)."""

from __future__ import annotations

import sqlalchemy as sa

from agentloom.storage.schema_base import SeqKey, metadata

# --- people ---------------------------------------------------------------------------------
# The organization's users (made when an invite is accepted), its invites, groups of users,
# roles (each a set of permissions, the scopes' words) and who holds which role where. Every
# change here bumps ``auth_state.epoch``: a user's keys are resolved with their groups and roles.
users = sa.Table(
    "users",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("email", sa.String(320), nullable=False, unique=True),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),  # in the organization: owner or reader
    sa.Column("added_at", sa.Float, nullable=False),
)

invites = sa.Table(
    "invites",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("email", sa.String(320), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("projects", sa.Text, nullable=False),  # JSON [{"id", "role"}] joined on accepting
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
    sa.Column("accepted_at", sa.Float, nullable=True),
)

groups = sa.Table(
    "groups",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

group_users = sa.Table(
    "group_users",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column(
        "group_id", sa.String(96), sa.ForeignKey("groups.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column(
        "user_id", sa.String(96), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("group_id", "user_id", name="uq_group_users"),
    sa.Index("ix_group_users_user", "user_id"),
)

# A role of the organization (``project_id`` null, ``resource_type`` api.organization), of one
# project, or predefined for every project (``project_id`` null, api.project).
roles = sa.Table(
    "roles",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(96), nullable=False, unique=True),
    sa.Column(
        "project_id", sa.String(96), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
    ),
    sa.Column("resource_type", sa.String(32), nullable=False),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("description", sa.Text, nullable=True),
    sa.Column("permissions", sa.Text, nullable=False),  # JSON list of scopes
    sa.Column("predefined", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

# Who is in a project: a user with role owner or member, or a group with a project role's id.
project_members = sa.Table(
    "project_members",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column(
        "project_id",
        sa.String(96),
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("principal_type", sa.String(16), nullable=False),  # user or group
    sa.Column("principal_id", sa.String(96), nullable=False),
    sa.Column("role", sa.String(96), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.UniqueConstraint("project_id", "principal_type", "principal_id", name="uq_project_members"),
    sa.Index("ix_project_members_principal", "principal_id"),
)

# A role held by a user or a group, in the organization (``project_id`` null) or in a project.
role_assignments = sa.Table(
    "role_assignments",
    metadata,
    sa.Column("seq", SeqKey, primary_key=True, autoincrement=True),
    sa.Column(
        "role_id", sa.String(96), sa.ForeignKey("roles.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("principal_type", sa.String(16), nullable=False),
    sa.Column("principal_id", sa.String(96), nullable=False),
    sa.Column(
        "project_id", sa.String(96), sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
    ),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("ix_role_assignments_principal", "principal_id"),
)
