"""The organization's people: users, invites, groups and who is in which project (SQLAlchemy
Core, SQLite and PostgreSQL).

These are the organization's records, read and written by the admin API and the key verifier:
the user, invite and group tables have no project; a statement on ``project_members`` names the
project it is about. Every change that can alter what a user's key may do (a user removed, a
membership or a group changed) bumps ``auth_state.epoch`` in the same transaction, so every
process drops the principals it has cached.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from agentloom.frozen import frozen
from agentloom.storage import schema
from agentloom.storage.base import Page
from agentloom.storage.pages import keyset_page
from agentloom.storage.projects import ListQuery, bump_epoch
from agentloom.storage.runner import Runner
from agentloom.storage.scoped import across_projects

U = schema.users
I = schema.invites  # noqa: E741
G = schema.groups
GU = schema.group_users
PM = schema.project_members
RA = schema.role_assignments
K = schema.api_keys

PrincipalType = Literal["user", "group"]


@frozen
class UserRow:
    id: str
    email: str
    name: str
    role: str  # in the organization: owner or reader
    added_at: float


@frozen
class InviteRow:
    id: str
    email: str
    role: str
    projects: str  # JSON [{"id", "role"}]
    created_at: float
    expires_at: float
    accepted_at: float | None = None


@frozen
class GroupRow:
    id: str
    name: str
    created_at: float


@frozen
class MemberRow:
    """A user (role ``owner`` / ``member``) or a group (a project role's id) in a project."""

    project_id: str
    principal_type: PrincipalType
    principal_id: str
    role: str
    created_at: float


class SqlPeopleStore:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    # --- users ---------------------------------------------------------------------------------

    async def get_user(self, user_id: str) -> UserRow | None:
        return await self._runner.read(partial(_get_user, U.c.id == user_id))

    async def user_by_email(self, email: str) -> UserRow | None:
        return await self._runner.read(partial(_get_user, U.c.email == email))

    async def list_users(self, query: ListQuery, emails: tuple[str, ...]) -> Page[UserRow] | None:
        where = U.c.email.in_(emails) if emails else sa.true()
        return await self._runner.read(partial(_page, U, _user, where, query))

    async def set_user_role(self, user_id: str, role: str) -> UserRow | None:
        return await self._runner.write(partial(_set_user_role, user_id, role))

    async def delete_user(self, user_id: str) -> bool:
        """The user, their keys, memberships and roles."""
        return await self._runner.write(partial(_delete_principal, "user", user_id))

    # --- invites -------------------------------------------------------------------------------

    async def add_invite(self, row: InviteRow) -> None:
        await self._runner.write(partial(_insert, I, asdict(row)))

    async def get_invite(self, invite_id: str) -> InviteRow | None:
        return await self._runner.read(partial(_get_invite, invite_id))

    async def list_invites(self, query: ListQuery) -> Page[InviteRow] | None:
        return await self._runner.read(partial(_page, I, _invite, sa.true(), query))

    async def delete_invite(self, invite_id: str) -> bool:
        return await self._runner.write(partial(_delete_invite, invite_id))

    async def accept_invite(self, invite_id: str, user: UserRow, members: list[MemberRow]) -> bool:
        """Mark the invite accepted, add ``user`` and put them in the invite's projects
        (``False``: it was accepted meanwhile)."""
        return await self._runner.write(partial(_accept, invite_id, user, members))

    # --- groups --------------------------------------------------------------------------------

    async def add_group(self, row: GroupRow) -> None:
        await self._runner.write(partial(_insert, G, asdict(row)))

    async def get_group(self, group_id: str) -> GroupRow | None:
        return await self._runner.read(partial(_get_group, group_id))

    async def list_groups(self, query: ListQuery) -> Page[GroupRow] | None:
        return await self._runner.read(partial(_page, G, _group, sa.true(), query))

    async def rename_group(self, group_id: str, name: str) -> GroupRow | None:
        return await self._runner.write(partial(_rename_group, group_id, name))

    async def delete_group(self, group_id: str) -> bool:
        return await self._runner.write(partial(_delete_principal, "group", group_id))

    async def add_to_group(self, group_id: str, user_id: str, now: float) -> bool:
        """``False``: the user was in the group already."""
        return await self._runner.write(partial(_add_to_group, group_id, user_id, now))

    async def in_group(self, group_id: str, user_id: str) -> bool:
        return await self._runner.read(partial(_in_group, group_id, user_id))

    async def group_users(self, group_id: str, query: ListQuery) -> Page[UserRow] | None:
        return await self._runner.read(partial(_group_users, group_id, query))

    async def remove_from_group(self, group_id: str, user_id: str) -> bool:
        return await self._runner.write(partial(_remove_from_group, group_id, user_id))

    # --- project members -------------------------------------------------------------------------

    async def add_member(self, row: MemberRow) -> bool:
        """``False``: already a member."""
        return await self._runner.write(partial(_add_member, row))

    async def get_member(
        self, project_id: str, kind: PrincipalType, principal_id: str
    ) -> MemberRow | None:
        return await self._runner.read(partial(_get_member, project_id, kind, principal_id))

    async def list_members(
        self, project_id: str, kind: PrincipalType, query: ListQuery
    ) -> Page[MemberRow] | None:
        return await self._runner.read(partial(_list_members, project_id, kind, query))

    async def set_member_role(
        self, project_id: str, kind: PrincipalType, principal_id: str, role: str
    ) -> bool:
        change = partial(_set_member_role, project_id, kind, principal_id, role)
        return await self._runner.write(change)

    async def remove_member(self, project_id: str, kind: PrincipalType, principal_id: str) -> bool:
        change = partial(_remove_member, project_id, kind, principal_id)
        return await self._runner.write(change)

    async def memberships(self, user_id: str) -> list[MemberRow]:
        """The projects a user is in by name (not through a group)."""
        return await self._runner.read(partial(_memberships, user_id))


# --- shared --------------------------------------------------------------------------------


def _insert(table: sa.Table, values: dict[str, Any], conn: Connection) -> None:
    conn.execute(table.insert().values(**values))


def _page(
    table: sa.Table,
    shape: Any,
    where: sa.ColumnElement[bool],
    query: ListQuery,
    conn: Connection,
) -> Page[Any] | None:
    after = _seq(conn, table, table.c.id == query.after, query.after)
    if after == -1:
        return None
    select = sa.select(table).where(where)
    return keyset_page(
        conn, select, table.c.seq, order=query.order, limit=query.limit, row=shape, after=after
    )


def _seq(
    conn: Connection, table: sa.Table, where: sa.ColumnElement[bool], given: str | None
) -> int | None:
    """The ``seq`` of the row a cursor names; ``None`` without a cursor, -1 for an unknown one."""
    if given is None:
        return None
    seq = conn.scalar(sa.select(table.c.seq).where(where))
    return -1 if seq is None else int(seq)


# --- users ---------------------------------------------------------------------------------


def _user(row: Any) -> UserRow:
    return UserRow(row.id, row.email, row.name, row.role, row.added_at)


def _get_user(where: sa.ColumnElement[bool], conn: Connection) -> UserRow | None:
    row = conn.execute(sa.select(U).where(where)).first()
    return None if row is None else _user(row)


def _set_user_role(user_id: str, role: str, conn: Connection) -> UserRow | None:
    if conn.execute(U.update().where(U.c.id == user_id).values(role=role)).rowcount:
        bump_epoch(conn)
    return _get_user(U.c.id == user_id, conn)


def _delete_principal(kind: PrincipalType, principal_id: str, conn: Connection) -> bool:
    """A user or a group, and every place they are named (each project's memberships)."""
    named = sa.and_(PM.c.principal_type == kind, PM.c.principal_id == principal_id)
    conn.execute(across_projects(PM.delete()).where(named))
    held = sa.and_(RA.c.principal_type == kind, RA.c.principal_id == principal_id)
    conn.execute(across_projects(RA.delete()).where(held))
    if kind == "user":
        conn.execute(across_projects(K.delete()).where(K.c.user_id == principal_id))
        conn.execute(GU.delete().where(GU.c.user_id == principal_id))
        deleted = conn.execute(U.delete().where(U.c.id == principal_id)).rowcount
    else:
        conn.execute(GU.delete().where(GU.c.group_id == principal_id))
        deleted = conn.execute(G.delete().where(G.c.id == principal_id)).rowcount
    if deleted:
        bump_epoch(conn)
    return deleted > 0


# --- invites -------------------------------------------------------------------------------


def _invite(row: Any) -> InviteRow:
    return InviteRow(
        row.id, row.email, row.role, row.projects, row.created_at, row.expires_at, row.accepted_at
    )


def _get_invite(invite_id: str, conn: Connection) -> InviteRow | None:
    row = conn.execute(sa.select(I).where(I.c.id == invite_id)).first()
    return None if row is None else _invite(row)


def _delete_invite(invite_id: str, conn: Connection) -> bool:
    pending = sa.and_(I.c.id == invite_id, I.c.accepted_at.is_(None))
    return conn.execute(I.delete().where(pending)).rowcount > 0


def _accept(invite_id: str, user: UserRow, members: list[MemberRow], conn: Connection) -> bool:
    pending = sa.and_(I.c.id == invite_id, I.c.accepted_at.is_(None))
    if not conn.execute(I.update().where(pending).values(accepted_at=user.added_at)).rowcount:
        return False
    conn.execute(U.insert().values(**asdict(user)))
    for member in members:
        _add_member(member, conn)
    bump_epoch(conn)
    return True


# --- groups --------------------------------------------------------------------------------


def _group(row: Any) -> GroupRow:
    return GroupRow(row.id, row.name, row.created_at)


def _get_group(group_id: str, conn: Connection) -> GroupRow | None:
    row = conn.execute(sa.select(G).where(G.c.id == group_id)).first()
    return None if row is None else _group(row)


def _rename_group(group_id: str, name: str, conn: Connection) -> GroupRow | None:
    conn.execute(G.update().where(G.c.id == group_id).values(name=name))
    return _get_group(group_id, conn)


def _add_to_group(group_id: str, user_id: str, now: float, conn: Connection) -> bool:
    if _in_group(group_id, user_id, conn):
        return False
    conn.execute(GU.insert().values(group_id=group_id, user_id=user_id, created_at=now))
    bump_epoch(conn)
    return True


def _in_group(group_id: str, user_id: str, conn: Connection) -> bool:
    found = sa.select(GU.c.seq).where(GU.c.group_id == group_id, GU.c.user_id == user_id)
    return conn.scalar(found) is not None


def _group_users(group_id: str, query: ListQuery, conn: Connection) -> Page[UserRow] | None:
    mine = sa.and_(GU.c.group_id == group_id, GU.c.user_id == query.after)
    after = _seq(conn, GU, mine, query.after)
    if after == -1:
        return None
    select = sa.select(U).join(GU, GU.c.user_id == U.c.id).where(GU.c.group_id == group_id)
    return keyset_page(
        conn, select, GU.c.seq, order=query.order, limit=query.limit, row=_user, after=after
    )


def _remove_from_group(group_id: str, user_id: str, conn: Connection) -> bool:
    mine = sa.and_(GU.c.group_id == group_id, GU.c.user_id == user_id)
    removed = conn.execute(GU.delete().where(mine)).rowcount > 0
    if removed:
        bump_epoch(conn)
    return removed


# --- project members -------------------------------------------------------------------------


def _member(row: Any) -> MemberRow:
    return MemberRow(row.project_id, row.principal_type, row.principal_id, row.role, row.created_at)


def _one(project_id: str, kind: str, principal_id: str) -> sa.ColumnElement[bool]:
    return sa.and_(
        PM.c.project_id == project_id,
        PM.c.principal_type == kind,
        PM.c.principal_id == principal_id,
    )


def _add_member(row: MemberRow, conn: Connection) -> bool:
    if _get_member(row.project_id, row.principal_type, row.principal_id, conn) is not None:
        return False
    conn.execute(PM.insert().values(**asdict(row)))
    bump_epoch(conn)
    return True


def _get_member(
    project_id: str, kind: str, principal_id: str, conn: Connection
) -> MemberRow | None:
    row = conn.execute(sa.select(PM).where(_one(project_id, kind, principal_id))).first()
    return None if row is None else _member(row)


def _list_members(
    project_id: str, kind: str, query: ListQuery, conn: Connection
) -> Page[MemberRow] | None:
    after = None
    if query.after is not None:
        after = _seq(conn, PM, _one(project_id, kind, query.after), query.after)
        if after == -1:
            return None
    mine = sa.and_(PM.c.project_id == project_id, PM.c.principal_type == kind)
    select = sa.select(PM).where(mine)
    return keyset_page(
        conn, select, PM.c.seq, order=query.order, limit=query.limit, row=_member, after=after
    )


def _set_member_role(
    project_id: str, kind: str, principal_id: str, role: str, conn: Connection
) -> bool:
    changed = PM.update().where(_one(project_id, kind, principal_id)).values(role=role)
    if not conn.execute(changed).rowcount:
        return False
    bump_epoch(conn)
    return True


def _remove_member(project_id: str, kind: str, principal_id: str, conn: Connection) -> bool:
    if not conn.execute(PM.delete().where(_one(project_id, kind, principal_id))).rowcount:
        return False
    held = sa.and_(
        RA.c.project_id == project_id,
        RA.c.principal_type == kind,
        RA.c.principal_id == principal_id,
    )
    conn.execute(RA.delete().where(held))
    bump_epoch(conn)
    return True


def _memberships(user_id: str, conn: Connection) -> list[MemberRow]:
    mine = sa.and_(PM.c.principal_type == "user", PM.c.principal_id == user_id)
    rows = conn.execute(across_projects(sa.select(PM)).where(mine).order_by(PM.c.seq)).all()
    return [_member(row) for row in rows]
