"""The organization's users and invites, who is in which project, and users' own API keys.

A person joins when their invite is accepted: by an administrator for now
(``POST /v1/organization/invites/{id}/accept``, agentloom's), by signing in once OIDC sign-in
comes (it will accept the pending invite of the signed-in email the same way). A user has API
keys of their own in each project they have access to (by name, through a group, or as an owner
of the organization); such a key works while that access lasts, with what both its scopes and
the user's roles there grant (:mod:`agentloom.auth.verifier`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Final

from agentloom.api import people as api
from agentloom.api.admin import Deleted, NewKey
from agentloom.api.lists import ListPage
from agentloom.auth.keys import KeyHasher, new_key, redact
from agentloom.auth.scopes import scopes_of
from agentloom.errors import ConflictError, InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.services.organization.audit import AuditLog
from agentloom.storage.people import InviteRow, MemberRow, SqlPeopleStore, UserRow
from agentloom.storage.projects import KeyRow, ListQuery, ProjectRow, SqlProjectStore
from agentloom.storage.roles import SqlRoleStore
from agentloom.tenancy import DEFAULT_PROJECT

__all__ = ["INVITE_SECONDS", "PeopleService", "scopes_text"]

INVITE_SECONDS: Final = 7 * 86_400  # an invite is pending for a week, as at OpenAI


class PeopleService:
    def __init__(
        self,
        people: SqlPeopleStore,
        roles: SqlRoleStore,
        projects: SqlProjectStore,
        hasher: KeyHasher,
        *,
        audit: AuditLog,
        changed: Callable[[], None],
    ) -> None:
        self._people = people
        self._roles = roles
        self._projects = projects
        self._hasher = hasher
        self._audit = audit
        self._changed = changed  # this process's key cache must forget what it knew

    # --- users ---------------------------------------------------------------------------------

    async def get_user(self, user_id: str) -> api.OrganizationUser:
        return _user(await self.user(user_id))

    async def list_users(
        self, query: ListQuery, emails: tuple[str, ...]
    ) -> ListPage[api.OrganizationUser]:
        page = await self._people.list_users(query, tuple(e.lower() for e in emails))
        if page is None:
            raise _no_cursor("user", query.after)
        return ListPage[api.OrganizationUser].of(
            [_user(row) for row in page.data], has_more=page.has_more
        )

    async def update_user(
        self, user_id: str, request: api.UpdateUserRequest
    ) -> api.OrganizationUser:
        await self.user(user_id)
        role = request.role or _org_role(request.role_id)
        if role is None:
            return await self.get_user(user_id)
        row = await self._people.set_user_role(user_id, role)
        assert row is not None
        self._changed()
        await self._log("user.updated", user_id, {"changes_requested": {"role": role}})
        return _user(row)

    async def delete_user(self, user_id: str) -> Deleted:
        """The user leaves the organization: their memberships, roles and keys go too."""
        await self.user(user_id)
        await self._people.delete_user(user_id)
        self._changed()
        await self._log("user.deleted", user_id)
        return Deleted(id=user_id, object="organization.user.deleted")

    async def user(self, user_id: str) -> UserRow:
        row = await self._people.get_user(user_id)
        if row is None:
            raise NotFoundError(f"No user with id '{user_id}'.", param="user_id")
        return row

    # --- invites -------------------------------------------------------------------------------

    async def invite(self, request: api.CreateInviteRequest) -> api.Invite:
        email = request.email.lower()
        if await self._people.user_by_email(email) is not None:
            raise ConflictError(f"'{email}' is already a user of the organization.", param="email")
        asked = request.projects
        joins = [api.InviteProject(id=DEFAULT_PROJECT, role="member")] if asked is None else asked
        for project in joins:
            await self._active(project.id, param="projects")
        now = time.time()
        row = InviteRow(
            id=new_id("invite", separator="-"),
            email=email,
            role=request.role,
            projects=json.dumps([p.model_dump() for p in joins]),
            created_at=now,
            expires_at=now + INVITE_SECONDS,
        )
        await self._people.add_invite(row)
        await self._log("invite.sent", row.id, {"data": {"email": email, "role": row.role}})
        return _invite(row)

    async def get_invite(self, invite_id: str) -> api.Invite:
        return _invite(await self._invite(invite_id))

    async def list_invites(self, query: ListQuery) -> ListPage[api.Invite]:
        page = await self._people.list_invites(query)
        if page is None:
            raise _no_cursor("invite", query.after)
        return ListPage[api.Invite].of([_invite(r) for r in page.data], has_more=page.has_more)

    async def delete_invite(self, invite_id: str) -> Deleted:
        await self._invite(invite_id)
        if not await self._people.delete_invite(invite_id):
            raise InvalidRequestError(
                f"Invite '{invite_id}' was accepted: remove the user instead.", param="invite_id"
            )
        await self._log("invite.deleted", invite_id)
        return Deleted(id=invite_id, object="organization.invite.deleted")

    async def accept_invite(
        self, invite_id: str, request: api.AcceptInviteRequest
    ) -> api.OrganizationUser:
        """The invited person joins: a user with the invite's role, in its projects."""
        invite = await self._invite(invite_id)
        if _status(invite) != "pending":
            raise InvalidRequestError(
                f"Invite '{invite_id}' is {_status(invite)}.", param="invite_id"
            )
        now = time.time()
        name = request.name or invite.email.partition("@")[0]
        user = UserRow(new_id("user", separator="-"), invite.email, name, invite.role, now)
        joins = [
            MemberRow(p["id"], "user", user.id, p["role"], now)
            for p in json.loads(invite.projects)
            if await self._projects.get_project(p["id"]) is not None
        ]
        if not await self._people.accept_invite(invite_id, user, joins):
            raise InvalidRequestError(f"Invite '{invite_id}' was accepted.", param="invite_id")
        self._changed()
        await self._log("invite.accepted", invite_id)
        await self._log("user.added", user.id, {"data": {"role": user.role}})
        return _user(user)

    async def _invite(self, invite_id: str) -> InviteRow:
        row = await self._people.get_invite(invite_id)
        if row is None:
            raise NotFoundError(f"No invite with id '{invite_id}'.", param="invite_id")
        return row

    # --- a project's users ---------------------------------------------------------------------

    async def add_project_user(
        self, project_id: str, request: api.AddProjectUserRequest
    ) -> api.ProjectUser:
        project = await self._active(project_id)
        user = await self._named(request)
        member = MemberRow(project_id, "user", user.id, request.role, time.time())
        if not await self._people.add_member(member):
            raise ConflictError(
                f"User '{user.id}' is in project '{project_id}' already.", param="user_id"
            )
        self._changed()
        await self._log("user.added", user.id, {"data": {"role": member.role}}, project)
        return _project_user(user, member)

    async def get_project_user(self, project_id: str, user_id: str) -> api.ProjectUser:
        await self._project(project_id)
        return _project_user(await self.user(user_id), await self._member(project_id, user_id))

    async def list_project_users(
        self, project_id: str, query: ListQuery
    ) -> ListPage[api.ProjectUser]:
        await self._project(project_id)
        page = await self._people.list_members(project_id, "user", query)
        if page is None:
            raise _no_cursor("user", query.after)
        data = [_project_user(await self.user(m.principal_id), m) for m in page.data]
        return ListPage[api.ProjectUser].of(data, has_more=page.has_more)

    async def update_project_user(
        self, project_id: str, user_id: str, request: api.UpdateProjectUserRequest
    ) -> api.ProjectUser:
        project = await self._project(project_id)
        await self._member(project_id, user_id)
        await self._people.set_member_role(project_id, "user", user_id, request.role)
        self._changed()
        changes = {"changes_requested": {"role": request.role}}
        await self._log("user.updated", user_id, changes, project)
        return await self.get_project_user(project_id, user_id)

    async def remove_project_user(self, project_id: str, user_id: str) -> Deleted:
        """The user leaves the project: their keys there stop working (kept, inactive)."""
        project = await self._project(project_id)
        await self._member(project_id, user_id)
        await self._people.remove_member(project_id, "user", user_id)
        self._changed()
        await self._log("user.deleted", user_id, None, project)
        return Deleted(id=user_id, object="organization.project.user.deleted")

    async def create_user_key(
        self, project_id: str, user_id: str, request: api.CreateUserKeyRequest
    ) -> NewKey:
        """A key of the user's own in the project (they must have access to it)."""
        scopes = scopes_text(request.scopes)
        project = await self._active(project_id)
        user = await self.user(user_id)
        if await self._roles.access(user_id, project_id) is None:
            raise InvalidRequestError(
                f"User '{user_id}' has no access to project '{project_id}': add them first.",
                param="user_id",
            )
        value, now = new_key(), time.time()
        expires = None if request.expires_in_seconds is None else now + request.expires_in_seconds
        row = KeyRow(
            id=new_id("key"),
            project_id=project_id,
            service_account_id=None,
            name=request.name,
            digest=self._hasher.digest(value),
            redacted=redact(value),
            created_at=now,
            expires_at=expires,
            user_id=user.id,
            scopes=scopes,
        )
        await self._projects.add_key(row)
        self._changed()
        await self._log("api_key.created", row.id, {"data": _key_data(scopes)}, project)
        return NewKey(
            id=row.id,
            object="organization.project.user.api_key",
            name=row.name,
            value=value,
            created_at=int(now),
            expires_at=None if expires is None else int(expires),
        )

    async def _named(self, request: api.AddProjectUserRequest) -> UserRow:
        if request.user_id is not None:
            return await self.user(request.user_id)
        if request.email is None:
            raise InvalidRequestError("Name the user: 'user_id' or 'email'.", param="user_id")
        found = await self._people.user_by_email(request.email.lower())
        if found is None:
            raise NotFoundError(f"No user with email '{request.email}'.", param="email")
        return found

    async def _member(self, project_id: str, user_id: str) -> MemberRow:
        found = await self._people.get_member(project_id, "user", user_id)
        if found is None:
            raise NotFoundError(f"No user '{user_id}' in project '{project_id}'.", param="user_id")
        return found

    # --- helpers -------------------------------------------------------------------------------

    async def _project(self, project_id: str) -> ProjectRow:
        row = await self._projects.get_project(project_id)
        if row is None:
            raise NotFoundError(f"No project with id '{project_id}'.", param="project_id")
        return row

    async def _active(self, project_id: str, *, param: str = "project_id") -> ProjectRow:
        row = await self._projects.get_project(project_id)
        if row is None or row.archived_at is not None:
            raise InvalidRequestError(f"No active project '{project_id}'.", param=param)
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


def scopes_text(given: list[str] | None) -> str | None:
    """A key's scopes as stored (checked; ``None``: every permission)."""
    scopes = scopes_of(given)
    return None if scopes is None else json.dumps(sorted(scopes))


def _key_data(scopes: str | None) -> dict[str, object]:
    return {"scopes": [] if scopes is None else json.loads(scopes)}


def _org_role(role_id: str | None) -> str | None:
    roles = {"role_org_owner": "owner", "role_org_reader": "reader"}
    if role_id is None:
        return None
    if role_id not in roles:
        raise InvalidRequestError(
            f"'{role_id}' is not an organization role a user is given by name "
            "(role_org_owner, role_org_reader); assign other roles with /roles.",
            param="role_id",
        )
    return roles[role_id]


def _user(row: UserRow) -> api.OrganizationUser:
    role = "owner" if row.role == "owner" else "reader"
    return api.OrganizationUser(
        id=row.id, email=row.email, name=row.name, role=role, added_at=int(row.added_at)
    )


def _status(row: InviteRow) -> str:
    if row.accepted_at is not None:
        return "accepted"
    return "expired" if row.expires_at <= time.time() else "pending"


def _invite(row: InviteRow) -> api.Invite:
    return api.Invite.model_validate(
        {
            "id": row.id,
            "email": row.email,
            "role": row.role,
            "status": _status(row),
            "created_at": int(row.created_at),
            "expires_at": int(row.expires_at),
            "accepted_at": None if row.accepted_at is None else int(row.accepted_at),
            "projects": json.loads(row.projects),
        }
    )


def _project_user(user: UserRow, member: MemberRow) -> api.ProjectUser:
    role = "owner" if member.role == "owner" else "member"
    return api.ProjectUser(
        id=user.id, email=user.email, name=user.name, role=role, added_at=int(member.created_at)
    )


def _no_cursor(what: str, after: str | None) -> NotFoundError:
    return NotFoundError(f"No {what} with id '{after}' to page from.", param="after")
