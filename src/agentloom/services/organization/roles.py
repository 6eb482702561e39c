"""Roles (the organization's and each project's) and who holds them.

A role's permissions are the scopes' words (:mod:`agentloom.auth.scopes`): ``api.files.read``,
``api.model.request``, ``api.all.read`` ... A user's key does, in a project, what its scopes and
the permissions of every role the user holds there both grant: the role of their membership
(``owner`` / ``member``), the roles of the groups they are in, and the roles assigned to them or
their groups in the project or in the organization. The predefined roles cannot be changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Final

from agentloom.api import people as api
from agentloom.api.admin import Deleted
from agentloom.auth.scopes import scopes_of
from agentloom.errors import ConflictError, InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.services.organization.audit import AuditLog
from agentloom.services.organization.groups import project_role
from agentloom.storage.people import PrincipalType, SqlPeopleStore
from agentloom.storage.projects import ListQuery, ProjectRow, SqlProjectStore
from agentloom.storage.roles import (
    ORGANIZATION,
    PROJECT,
    AssignmentRow,
    RoleRow,
    SqlRoleStore,
)

__all__ = ["RolesService"]

MAX_ROLES: Final = 1000  # a list's page, at most (OpenAI's default)


class RolesService:
    def __init__(
        self,
        roles: SqlRoleStore,
        people: SqlPeopleStore,
        projects: SqlProjectStore,
        *,
        audit: AuditLog,
        changed: Callable[[], None],
    ) -> None:
        self._roles = roles
        self._people = people
        self._projects = projects
        self._audit = audit
        self._changed = changed

    # --- roles (project_id None: the organization's) -------------------------------------------

    async def create(self, project_id: str | None, request: api.CreateRoleRequest) -> api.Role:
        project = await self._where(project_id)
        await self._unique(project_id, request.role_name)
        now = time.time()
        row = RoleRow(
            id=new_id("role"),
            project_id=project_id,
            resource_type=ORGANIZATION if project_id is None else PROJECT,
            name=request.role_name,
            description=request.description,
            permissions=_permissions(request.permissions),
            predefined=False,
            created_at=now,
            updated_at=now,
        )
        await self._roles.add_role(row)
        data = {"data": {"role_name": row.name, "permissions": row.granted}}
        await self._log("role.created", row.id, data, project)
        return _role(row)

    async def get(self, project_id: str | None, role_id: str) -> api.Role:
        return _role(await self._role(project_id, role_id))

    async def list(self, project_id: str | None, query: ListQuery) -> api.CursorPage[api.Role]:
        await self._where(project_id)
        page = await self._roles.list_roles(project_id, query)
        if page is None:
            raise NotFoundError(f"No role with id '{query.after}' to page from.", param="after")
        data = [_role(row) for row in page.data]
        return api.CursorPage[api.Role].of(data, [r.id for r in data], page.has_more)

    async def update(
        self, project_id: str | None, role_id: str, request: api.UpdateRoleRequest
    ) -> api.Role:
        project = await self._where(project_id)
        role = await self._changeable(project_id, role_id)
        values: dict[str, str | float | None] = {}
        if request.role_name is not None and request.role_name != role.name:
            await self._unique(project_id, request.role_name)
            values["name"] = request.role_name
        if request.permissions is not None:
            values["permissions"] = _permissions(request.permissions)
        if "description" in request.model_fields_set:
            values["description"] = request.description
        if values:
            values["updated_at"] = time.time()
            await self._roles.update_role(role_id, **values)
            self._changed()
            asked = request.model_dump(exclude_unset=True)
            await self._log("role.updated", role_id, {"changes_requested": asked}, project)
        return await self.get(project_id, role_id)

    async def delete(self, project_id: str | None, role_id: str) -> Deleted:
        project = await self._where(project_id)
        await self._changeable(project_id, role_id)
        await self._roles.delete_role(role_id)
        self._changed()
        await self._log("role.deleted", role_id, None, project)
        return Deleted(id=role_id, object="role.deleted")

    # --- who holds them --------------------------------------------------------------------------

    async def assign(
        self,
        kind: PrincipalType,
        principal_id: str,
        project_id: str | None,
        request: api.AssignRoleRequest,
    ) -> api.UserRole | api.GroupRole:
        project = await self._where(project_id, active=True)
        role = await self._assignable(project_id, request.role_id)
        holder = await self._holder(kind, principal_id)
        row = AssignmentRow(role.id, kind, principal_id, project_id, time.time())
        if not await self._roles.assign(row):
            raise ConflictError(
                f"The {kind} '{principal_id}' holds role '{role.id}' there already.",
                param="role_id",
            )
        self._changed()
        data = {"data": {"principal_type": kind, "principal_id": principal_id}}
        await self._log("role.assignment.created", role.id, data, project)
        return _assignment(role, holder)

    async def assigned(
        self, kind: PrincipalType, principal_id: str, project_id: str | None, role_id: str
    ) -> api.AssignedRole:
        await self._where(project_id)
        await self._holder(kind, principal_id)
        row = await self._roles.assignment(role_id, kind, principal_id, project_id)
        role = await self._roles.get_role(role_id)
        if row is None or role is None:
            raise NotFoundError(f"The {kind} does not hold role '{role_id}'.", param="role_id")
        return _assigned(row, role)

    async def assignments(
        self, kind: PrincipalType, principal_id: str, project_id: str | None, query: ListQuery
    ) -> api.CursorPage[api.AssignedRole]:
        await self._where(project_id)
        await self._holder(kind, principal_id)
        page = await self._roles.assignments(kind, principal_id, project_id, query)
        if page is None:
            raise NotFoundError(f"No role with id '{query.after}' to page from.", param="after")
        data = [_assigned(row, role) for row, role in page.data]
        return api.CursorPage[api.AssignedRole].of(data, [r.id for r in data], page.has_more)

    async def unassign(
        self, kind: PrincipalType, principal_id: str, project_id: str | None, role_id: str
    ) -> api.Removed:
        project = await self._where(project_id)
        if not await self._roles.unassign(role_id, kind, principal_id, project_id):
            raise NotFoundError(f"The {kind} does not hold role '{role_id}'.", param="role_id")
        self._changed()
        data = {"data": {"principal_type": kind, "principal_id": principal_id}}
        await self._log("role.assignment.deleted", role_id, data, project)
        return api.Removed(object=f"{kind}.role.deleted")

    # --- helpers -------------------------------------------------------------------------------

    async def _where(self, project_id: str | None, *, active: bool = False) -> ProjectRow | None:
        if project_id is None:
            return None
        row = await self._projects.get_project(project_id)
        if row is None:
            raise NotFoundError(f"No project with id '{project_id}'.", param="project_id")
        if active and row.archived_at is not None:
            raise InvalidRequestError(f"Project '{project_id}' is archived.", param="project_id")
        return row

    async def _role(self, project_id: str | None, role_id: str) -> RoleRow:
        if project_id is not None:
            return await project_role(self._roles, project_id, role_id)
        role = await self._roles.get_role(role_id)
        if role is None or role.resource_type != ORGANIZATION:
            raise NotFoundError(f"No organization role '{role_id}'.", param="role_id")
        return role

    async def _changeable(self, project_id: str | None, role_id: str) -> RoleRow:
        role = await self._role(project_id, role_id)
        if role.predefined:
            raise InvalidRequestError(
                f"Role '{role_id}' is predefined: it cannot be changed or deleted.",
                param="role_id",
            )
        return role

    async def _assignable(self, project_id: str | None, role_id: str) -> RoleRow:
        return await self._role(project_id, role_id)

    async def _unique(self, project_id: str | None, name: str) -> None:
        taken = await self._roles.list_roles(project_id, ListQuery(limit=MAX_ROLES))
        if taken is not None and any(role.name == name for role in taken.data):
            raise ConflictError(f"A role named '{name}' exists already.", param="role_name")

    async def _holder(self, kind: PrincipalType, principal_id: str) -> _Holder:
        if kind == "user":
            user = await self._people.get_user(principal_id)
            if user is not None:
                return api.OrganizationUser(
                    id=user.id,
                    email=user.email,
                    name=user.name,
                    role="owner" if user.role == "owner" else "reader",
                    added_at=int(user.added_at),
                )
        else:
            group = await self._people.get_group(principal_id)
            if group is not None:
                return api.RoleGroup(id=group.id, name=group.name, created_at=int(group.created_at))
        raise NotFoundError(f"No {kind} with id '{principal_id}'.", param=f"{kind}_id")

    async def _log(
        self,
        kind: str,
        subject: str,
        details: Mapping[str, object] | None = None,
        project: ProjectRow | None = None,
    ) -> None:
        where = None if project is None else (project.id, project.name)
        await self._audit.record(kind, subject=subject, project=where, details=details)


_Holder = api.OrganizationUser | api.RoleGroup


def _permissions(given: list[str]) -> str:
    """The permissions as stored: scopes, checked (an empty list grants nothing)."""
    checked = scopes_of(given, param="permissions")
    return json.dumps(sorted(checked or ()))


def _role(row: RoleRow) -> api.Role:
    return api.Role(
        id=row.id,
        name=row.name,
        description=row.description,
        permissions=row.granted,
        predefined_role=row.predefined,
        resource_type=row.resource_type,
    )


def _assignment(role: RoleRow, holder: _Holder) -> api.UserRole | api.GroupRole:
    if isinstance(holder, api.OrganizationUser):
        return api.UserRole(role=_role(role), user=holder)
    return api.GroupRole(role=_role(role), group=holder)


def _assigned(row: AssignmentRow, role: RoleRow) -> api.AssignedRole:
    return api.AssignedRole(
        id=role.id,
        name=role.name,
        description=role.description,
        permissions=role.granted,
        predefined_role=role.predefined,
        resource_type=role.resource_type,
        created_at=int(role.created_at),
        updated_at=int(role.updated_at),
        assignment_sources=[
            api.AssignmentSource(principal_id=row.principal_id, principal_type=row.principal_type)
        ],
    )
