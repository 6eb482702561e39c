"""Groups of users, and the projects a group is in (with a project role its users hold there)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from agentloom.api import people as api
from agentloom.api.admin import Deleted
from agentloom.errors import ConflictError, InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.services.organization.audit import AuditLog
from agentloom.storage.people import GroupRow, MemberRow, SqlPeopleStore, UserRow
from agentloom.storage.projects import ListQuery, ProjectRow, SqlProjectStore
from agentloom.storage.roles import PROJECT, RoleRow, SqlRoleStore

__all__ = ["GroupsService"]


class GroupsService:
    def __init__(
        self,
        people: SqlPeopleStore,
        roles: SqlRoleStore,
        projects: SqlProjectStore,
        *,
        audit: AuditLog,
        changed: Callable[[], None],
    ) -> None:
        self._people = people
        self._roles = roles
        self._projects = projects
        self._audit = audit
        self._changed = changed

    # --- groups --------------------------------------------------------------------------------

    async def create(self, request: api.GroupRequest) -> api.Group:
        row = GroupRow(new_id("group"), request.name, time.time())
        await self._people.add_group(row)
        await self._log("group.created", row.id, {"data": {"group_name": row.name}})
        return _group(row)

    async def get(self, group_id: str) -> api.Group:
        return _group(await self.group(group_id))

    async def list(self, query: ListQuery) -> api.CursorPage[api.Group]:
        page = await self._people.list_groups(query)
        if page is None:
            raise _no_cursor("group", query.after)
        data = [_group(row) for row in page.data]
        return api.CursorPage[api.Group].of(data, [g.id for g in data], page.has_more)

    async def rename(self, group_id: str, request: api.GroupRequest) -> api.Group:
        await self.group(group_id)
        row = await self._people.rename_group(group_id, request.name)
        assert row is not None
        changes = {"changes_requested": {"group_name": request.name}}
        await self._log("group.updated", group_id, changes)
        return _group(row)

    async def delete(self, group_id: str) -> Deleted:
        await self.group(group_id)
        await self._people.delete_group(group_id)
        self._changed()
        await self._log("group.deleted", group_id)
        return Deleted(id=group_id, object="group.deleted")

    async def group(self, group_id: str) -> GroupRow:
        row = await self._people.get_group(group_id)
        if row is None:
            raise NotFoundError(f"No group with id '{group_id}'.", param="group_id")
        return row

    # --- its users -----------------------------------------------------------------------------

    async def add_user(self, group_id: str, request: api.AddGroupUserRequest) -> api.GroupUserAdded:
        await self.group(group_id)
        await self._user(request.user_id)
        if not await self._people.add_to_group(group_id, request.user_id, time.time()):
            raise ConflictError(
                f"User '{request.user_id}' is in group '{group_id}' already.", param="user_id"
            )
        self._changed()
        added = {"data": {"user_id": request.user_id}}
        await self._log("tenant.group.member.added", group_id, added)
        return api.GroupUserAdded(group_id=group_id, user_id=request.user_id)

    async def get_user(self, group_id: str, user_id: str) -> api.GroupUser:
        await self.group(group_id)
        user = await self._user(user_id)
        if not await self._people.in_group(group_id, user_id):
            raise NotFoundError(f"No user '{user_id}' in group '{group_id}'.", param="user_id")
        return api.GroupUser(id=user.id, email=user.email, name=user.name)

    async def list_users(self, group_id: str, query: ListQuery) -> api.CursorPage[api.GroupUser]:
        await self.group(group_id)
        page = await self._people.group_users(group_id, query)
        if page is None:
            raise _no_cursor("user", query.after)
        data = [api.GroupUser(id=u.id, email=u.email, name=u.name) for u in page.data]
        return api.CursorPage[api.GroupUser].of(data, [u.id for u in data], page.has_more)

    async def remove_user(self, group_id: str, user_id: str) -> api.Removed:
        await self.group(group_id)
        if not await self._people.remove_from_group(group_id, user_id):
            raise NotFoundError(f"No user '{user_id}' in group '{group_id}'.", param="user_id")
        self._changed()
        await self._log("tenant.group.member.removed", group_id, {"data": {"user_id": user_id}})
        return api.Removed(object="group.user.deleted")

    # --- the projects it is in -----------------------------------------------------------------

    async def add_to_project(
        self, project_id: str, request: api.AddProjectGroupRequest
    ) -> api.ProjectGroup:
        project = await self._project(project_id, active=True)
        group = await self.group(request.group_id)
        await project_role(self._roles, project_id, request.role, param="role")
        member = MemberRow(project_id, "group", group.id, request.role, time.time())
        if not await self._people.add_member(member):
            raise ConflictError(
                f"Group '{group.id}' is in project '{project_id}' already.", param="group_id"
            )
        self._changed()
        data = {"data": {"principal_type": "group", "role_id": request.role}}
        await self._log("role.assignment.created", group.id, data, project)
        return _project_group(group, member)

    async def project_group(self, project_id: str, group_id: str) -> api.ProjectGroup:
        await self._project(project_id)
        group = await self.group(group_id)
        member = await self._people.get_member(project_id, "group", group_id)
        if member is None:
            raise _not_in(project_id, group_id)
        return _project_group(group, member)

    async def project_groups(
        self, project_id: str, query: ListQuery
    ) -> api.CursorPage[api.ProjectGroup]:
        await self._project(project_id)
        page = await self._people.list_members(project_id, "group", query)
        if page is None:
            raise _no_cursor("group", query.after)
        data = [_project_group(await self.group(m.principal_id), m) for m in page.data]
        ids = [g.group_id for g in data]
        return api.CursorPage[api.ProjectGroup].of(data, ids, page.has_more)

    async def remove_from_project(self, project_id: str, group_id: str) -> api.Removed:
        project = await self._project(project_id)
        if not await self._people.remove_member(project_id, "group", group_id):
            raise _not_in(project_id, group_id)
        self._changed()
        await self._log("role.assignment.deleted", group_id, None, project)
        return api.Removed(object="project.group.deleted")

    # --- helpers -------------------------------------------------------------------------------

    async def _user(self, user_id: str) -> UserRow:
        found = await self._people.get_user(user_id)
        if found is None:
            raise NotFoundError(f"No user with id '{user_id}'.", param="user_id")
        return found

    async def _project(self, project_id: str, *, active: bool = False) -> ProjectRow:
        row = await self._projects.get_project(project_id)
        if row is None:
            raise NotFoundError(f"No project with id '{project_id}'.", param="project_id")
        if active and row.archived_at is not None:
            raise InvalidRequestError(f"Project '{project_id}' is archived.", param="project_id")
        return row

    async def _log(
        self,
        kind: str,
        subject: str,
        details: Mapping[str, object] | None = None,
        project: ProjectRow | None = None,
    ) -> None:
        where = None if project is None else (project.id, project.name)
        await self._audit.record(kind, subject=subject, project=where, details=details)


async def project_role(
    roles: SqlRoleStore, project_id: str, role_id: str, *, param: str = "role_id"
) -> RoleRow:
    """A role ``project_id`` may grant: its own, or a predefined project role."""
    role = await roles.get_role(role_id)
    if role is None or role.resource_type != PROJECT or role.project_id not in (None, project_id):
        raise NotFoundError(f"No role '{role_id}' in project '{project_id}'.", param=param)
    return role


def _group(row: GroupRow) -> api.Group:
    return api.Group(id=row.id, name=row.name, created_at=int(row.created_at))


def _project_group(group: GroupRow, member: MemberRow) -> api.ProjectGroup:
    return api.ProjectGroup(
        project_id=member.project_id,
        group_id=group.id,
        group_name=group.name,
        created_at=int(member.created_at),
    )


def _not_in(project_id: str, group_id: str) -> NotFoundError:
    return NotFoundError(f"No group '{group_id}' in project '{project_id}'.", param="group_id")


def _no_cursor(what: str, after: str | None) -> NotFoundError:
    return NotFoundError(f"No {what} with id '{after}' to page from.", param="after")
