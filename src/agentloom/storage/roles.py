"""Roles and who holds them, and what a user may do in a project (SQLAlchemy Core).

A role is the organization's (``resource_type`` ``api.organization``), a project's own, or
predefined for every project (``api.project`` without a project). A user holds roles by name
(their organization role, their project membership's) and by assignment, to them or to a
group they are in, in the organization or in one project. :func:`SqlRoleStore.access` gathers
all of it for the key verifier: a user's groups, role names and permissions in a project.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import partial
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.people import PrincipalType, UserRow
from agentloom.storage.projects import ListQuery, bump_epoch
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects
from agentloom.storage.upsert import insert as upsert

R = schema.roles
RA = schema.role_assignments
PM = schema.project_members
U = schema.users
GU = schema.group_users

ORGANIZATION: Final = "api.organization"
PROJECT: Final = "api.project"
# The predefined roles a name stands for: an organization role, a project membership's.
ORG_ROLES: Final = {"owner": "role_org_owner", "reader": "role_org_reader"}
PROJECT_ROLES: Final = {"owner": "role_project_owner", "member": "role_project_member"}
_ALL: Final = json.dumps(["api.all.write"])
# The predefined roles: id, resource type, name, description, permissions.
PREDEFINED: Final = (
    (ORG_ROLES["owner"], ORGANIZATION, "owner", "Manages the organization.", _ALL),
    (
        ORG_ROLES["reader"],
        ORGANIZATION,
        "reader",
        "A member of the organization.",
        '["api.all.read"]',
    ),
    (PROJECT_ROLES["owner"], PROJECT, "owner", "Manages the project.", _ALL),
    (PROJECT_ROLES["member"], PROJECT, "member", "Uses the project.", _ALL),
)


@frozen
class RoleRow:
    id: str
    project_id: str | None
    resource_type: str
    name: str
    description: str | None
    permissions: str  # JSON list of scopes
    predefined: bool
    created_at: float
    updated_at: float

    @property
    def granted(self) -> list[str]:
        found: list[str] = json.loads(self.permissions)
        return found


@frozen
class AssignmentRow:
    role_id: str
    principal_type: PrincipalType
    principal_id: str
    project_id: str | None  # None: in the organization
    created_at: float


@frozen
class Access:
    """What a user is in a project: their groups, the names of their roles, and the
    permissions those grant (the scopes' words)."""

    user: UserRow
    group_ids: frozenset[str]
    roles: frozenset[str]
    permissions: frozenset[str]


class SqlRoleStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def ensure_predefined(self, now: float) -> None:
        """Make the predefined roles unless they exist (a fresh or emptied database)."""
        await self._runner.write(partial(_ensure_predefined, now))

    async def add_role(self, row: RoleRow) -> None:
        await self._runner.write(partial(_add_role, row))

    async def get_role(self, role_id: str) -> RoleRow | None:
        return await self._runner.read(partial(_get_role, role_id))

    async def list_roles(self, project_id: str | None, query: ListQuery) -> Page[RoleRow] | None:
        """The organization's roles, or those a project may grant (its own, the predefined)."""
        return await self._runner.read(partial(_list_roles, project_id, query))

    async def update_role(self, role_id: str, **values: str | float | None) -> RoleRow | None:
        return await self._runner.write(partial(_update_role, role_id, values))

    async def delete_role(self, role_id: str) -> bool:
        return await self._runner.write(partial(_delete_role, role_id))

    async def assign(self, row: AssignmentRow) -> bool:
        """``False``: the principal held the role there already."""
        return await self._runner.write(partial(_assign, row))

    async def assignment(
        self, role_id: str, kind: PrincipalType, principal_id: str, project_id: str | None
    ) -> AssignmentRow | None:
        return await self._runner.read(
            partial(_assignment, role_id, kind, principal_id, project_id)
        )

    async def assignments(
        self, kind: PrincipalType, principal_id: str, project_id: str | None, query: ListQuery
    ) -> Page[tuple[AssignmentRow, RoleRow]] | None:
        return await self._runner.read(partial(_assignments, kind, principal_id, project_id, query))

    async def unassign(
        self, role_id: str, kind: PrincipalType, principal_id: str, project_id: str | None
    ) -> bool:
        return await self._runner.write(partial(_unassign, role_id, kind, principal_id, project_id))

    async def access(self, user_id: str, project_id: str) -> Access | None:
        """What ``user_id`` is in ``project_id``; ``None`` when they have no access to it (not
        in it by name or through a group, and not an owner of the organization)."""
        return await self._runner.read(partial(_access, user_id, project_id))


# --- roles ---------------------------------------------------------------------------------


def _role(row: Any) -> RoleRow:
    return RoleRow(
        row.id,
        row.project_id,
        row.resource_type,
        row.name,
        row.description,
        row.permissions,
        bool(row.predefined),
        row.created_at,
        row.updated_at,
    )


def _of(role_project: str | None) -> sa.ColumnElement[bool]:
    """The roles of a project (named), or of the organization (marked across projects)."""
    if role_project is None:
        return R.c.project_id.is_(None)
    return R.c.project_id == role_project


def _ensure_predefined(now: float, conn: Connection) -> None:
    rows = [
        {
            "id": role_id,
            "project_id": None,
            "resource_type": kind,
            "name": name,
            "description": text,
            "permissions": permissions,
            "predefined": True,
            "created_at": now,
            "updated_at": now,
        }
        for role_id, kind, name, text, permissions in PREDEFINED
    ]
    insert = upsert(conn, R)
    conn.execute(
        across_projects(insert.values(rows).on_conflict_do_nothing(index_elements=[R.c.id]))
    )


def _add_role(row: RoleRow, conn: Connection) -> None:
    insert = R.insert() if row.project_id is not None else across_projects(R.insert())
    conn.execute(insert.values(**asdict(row)))


def _get_role(role_id: str, conn: Connection) -> RoleRow | None:
    row = conn.execute(across_projects(sa.select(R)).where(R.c.id == role_id)).first()
    return None if row is None else _role(row)


def _list_roles(project_id: str | None, query: ListQuery, conn: Connection) -> Page[RoleRow] | None:
    if project_id is None:
        where = sa.and_(R.c.project_id.is_(None), R.c.resource_type == ORGANIZATION)
        select = across_projects(sa.select(R))
    else:
        predefined = sa.and_(R.c.project_id.is_(None), R.c.resource_type == PROJECT)
        where = sa.or_(R.c.project_id == project_id, predefined)
        select = sa.select(R)
    after = None
    if query.after is not None:
        after = conn.scalar(across_projects(sa.select(R.c.seq)).where(R.c.id == query.after))
        if after is None:
            return None
    return keyset_page(
        conn,
        select.where(where),
        R.c.seq,
        order=query.order,
        limit=query.limit,
        row=_role,
        after=after,
    )


def _update_role(role_id: str, values: dict[str, Any], conn: Connection) -> RoleRow | None:
    if conn.execute(across_projects(R.update()).where(R.c.id == role_id).values(**values)).rowcount:
        bump_epoch(conn)
    return _get_role(role_id, conn)


def _delete_role(role_id: str, conn: Connection) -> bool:
    granted = sa.and_(PM.c.principal_type == "group", PM.c.role == role_id)
    conn.execute(across_projects(PM.delete()).where(granted))
    conn.execute(across_projects(RA.delete()).where(RA.c.role_id == role_id))
    deleted = conn.execute(across_projects(R.delete()).where(R.c.id == role_id)).rowcount > 0
    if deleted:
        bump_epoch(conn)
    return deleted


# --- assignments -----------------------------------------------------------------------------


def _held(
    role_id: str, kind: str, principal_id: str, project_id: str | None
) -> sa.ColumnElement[bool]:
    where = RA.c.project_id.is_(None) if project_id is None else RA.c.project_id == project_id
    return sa.and_(
        RA.c.role_id == role_id,
        RA.c.principal_type == kind,
        RA.c.principal_id == principal_id,
        where,
    )


def _marked(project_id: str | None, statement: Any) -> Any:
    """An organization-level statement on a project table is marked as such."""
    return across_projects(statement) if project_id is None else statement


def _assignment_row(row: Any) -> AssignmentRow:
    return AssignmentRow(
        row.role_id, row.principal_type, row.principal_id, row.project_id, row.created_at
    )


def _assign(row: AssignmentRow, conn: Connection) -> bool:
    if _assignment(row.role_id, row.principal_type, row.principal_id, row.project_id, conn):
        return False
    conn.execute(_marked(row.project_id, RA.insert()).values(**asdict(row)))
    bump_epoch(conn)
    return True


def _assignment(
    role_id: str, kind: str, principal_id: str, project_id: str | None, conn: Connection
) -> AssignmentRow | None:
    select = _marked(project_id, sa.select(RA))
    row = conn.execute(select.where(_held(role_id, kind, principal_id, project_id))).first()
    return None if row is None else _assignment_row(row)


def _assignments(
    kind: str, principal_id: str, project_id: str | None, query: ListQuery, conn: Connection
) -> Page[tuple[AssignmentRow, RoleRow]] | None:
    where = RA.c.project_id.is_(None) if project_id is None else RA.c.project_id == project_id
    mine = sa.and_(RA.c.principal_type == kind, RA.c.principal_id == principal_id, where)
    after = None
    if query.after is not None:
        cursor = sa.select(RA.c.seq).where(mine, RA.c.role_id == query.after)
        after = conn.scalar(_marked(project_id, cursor))
        if after is None:
            return None
    columns = (*RA.c, *(c.label(f"r_{c.name}") for c in R.c))
    select = _marked(project_id, sa.select(*columns).join(R, R.c.id == RA.c.role_id)).where(mine)
    return keyset_page(
        conn,
        select,
        RA.c.seq,
        order=query.order,
        limit=query.limit,
        row=_assigned,
        after=after,
    )


def _assigned(row: Any) -> tuple[AssignmentRow, RoleRow]:
    role = RoleRow(*(getattr(row, f"r_{c.name}") for c in R.c if c.name != "seq"))
    return _assignment_row(row), role


def _unassign(
    role_id: str, kind: str, principal_id: str, project_id: str | None, conn: Connection
) -> bool:
    delete = _marked(project_id, RA.delete()).where(_held(role_id, kind, principal_id, project_id))
    removed = conn.execute(delete).rowcount > 0
    if removed:
        bump_epoch(conn)
    return removed


# --- a user's access -------------------------------------------------------------------------


def _access(user_id: str, project_id: str, conn: Connection) -> Access | None:
    row = conn.execute(sa.select(U).where(U.c.id == user_id)).first()
    if row is None:
        return None
    user = UserRow(row.id, row.email, row.name, row.role, row.added_at)
    groups = frozenset(conn.scalars(sa.select(GU.c.group_id).where(GU.c.user_id == user_id)))
    members = _project_roles(conn, project_id, user_id, groups)
    if not members and user.role != "owner":
        return None
    role_ids = {ORG_ROLES.get(user.role, ORG_ROLES["reader"]), *members}
    role_ids.update(_assigned_roles(conn, project_id, user_id, groups))
    roles = conn.execute(across_projects(sa.select(R)).where(R.c.id.in_(role_ids))).all()
    held = [_role(r) for r in roles]
    permissions = frozenset(p for role in held for p in role.granted)
    return Access(user, groups, frozenset(role.name for role in held), permissions)


def _project_roles(
    conn: Connection, project_id: str, user_id: str, groups: frozenset[str]
) -> set[str]:
    """The role ids the user's project memberships (by name, or a group's) stand for."""
    named = sa.and_(PM.c.principal_type == "user", PM.c.principal_id == user_id)
    grouped = sa.and_(PM.c.principal_type == "group", PM.c.principal_id.in_(groups))
    select = sa.select(PM.c.principal_type, PM.c.role).where(
        PM.c.project_id == project_id, sa.or_(named, grouped)
    )
    found = set()
    for kind, role in conn.execute(select).all():
        found.add(PROJECT_ROLES.get(role, PROJECT_ROLES["member"]) if kind == "user" else role)
    return found


def _assigned_roles(
    conn: Connection, project_id: str, user_id: str, groups: frozenset[str]
) -> set[str]:
    """The roles assigned to the user or their groups, in the organization or this project."""
    to_user = sa.and_(RA.c.principal_type == "user", RA.c.principal_id == user_id)
    to_group = sa.and_(RA.c.principal_type == "group", RA.c.principal_id.in_(groups))
    where = sa.and_(
        sa.or_(RA.c.project_id == project_id, RA.c.project_id.is_(None)),
        sa.or_(to_user, to_group),
    )
    return set(conn.scalars(sa.select(RA.c.role_id).where(where)))
