"""Projects, service accounts and their API keys: the organization's side of tenancy.

Used by the admin API (``/v1/organization/...``) and the operator's CLI (``agentloom keys``,
``agentloom projects``). A key's value exists only in the answer that creates it; after that
the server keeps its keyed hash and a redacted form. Every change that can invalidate a cached
key is seen by every server process through the verifier's epoch (see
:mod:`agentloom.auth.verifier`); this process drops its own cache at once.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentloom.access_rules import parse_rules, rules_of
from agentloom.api import admin
from agentloom.api.lists import ListPage
from agentloom.api.wire import WireModel
from agentloom.auth.keys import KeyHasher, new_key, redact
from agentloom.auth.policy import model_policy_text, policy_of, tool_policy_text
from agentloom.errors import InvalidRequestError, NotFoundError
from agentloom.ids import new_id
from agentloom.services.organization.audit import AuditLog
from agentloom.services.organization.people import scopes_text
from agentloom.storage.base import Page
from agentloom.storage.people import SqlPeopleStore
from agentloom.storage.projects import (
    KeyOwner,
    KeyRow,
    ListQuery,
    ProjectRow,
    ServiceAccountRow,
    SqlProjectStore,
)
from agentloom.storage.rate_limits import LimitRow, SqlRateLimitStore
from agentloom.storage.roles import SqlRoleStore
from agentloom.tenancy import DEFAULT_PROJECT, HOSTED_TOOLS

__all__ = ["ProjectsService"]

R = TypeVar("R")
W = TypeVar("W", bound=WireModel)


class ProjectsService:
    def __init__(
        self,
        store: SqlProjectStore,
        hasher: KeyHasher,
        *,
        changed: Callable[[], None],
        limits: SqlRateLimitStore,
        audit: AuditLog,
        models: Callable[[], list[str]],
        people: SqlPeopleStore | None = None,
        roles: SqlRoleStore | None = None,
    ) -> None:
        self._store = store
        self._people = people  # the users whose keys a project holds
        self._roles = roles
        self._hasher = hasher
        self._changed = changed  # this process's key cache must forget what it knew
        self._limits = limits
        self.audit = audit
        self._models = models  # the models served (rate limits are listed for each)

    # --- projects --------------------------------------------------------------------------

    async def create_project(self, request: admin.CreateProjectRequest) -> admin.Project:
        rules = parse_rules(request.access_rules or [])
        row = ProjectRow(
            id=new_id("proj"),
            name=request.name,
            created_at=time.time(),
            access_rules=None if rules is None else rules.text,
        )
        await self._store.create_project(row)
        data: dict[str, object] = {"name": row.name}
        if rules is not None:
            data["access_rules"] = rules.shown()
        await self._log("project.created", row, row.id, {"data": data})
        return _project(row)

    async def get_project(self, project_id: str) -> admin.Project:
        return _project(await self._project(project_id))

    async def list_projects(
        self, query: ListQuery, *, include_archived: bool
    ) -> ListPage[admin.Project]:
        page = await self._store.list_projects(query, archived=include_archived)
        return _list(page, _project, "project", query.after)

    async def update_project(
        self, project_id: str, request: admin.UpdateProjectRequest
    ) -> admin.Project:
        row = await self._project(project_id)
        if request.name is not None:
            renamed = await self._store.rename_project(project_id, request.name)
            row = renamed or row
            changes = {"changes_requested": {"title": request.name}}
            await self._log("project.updated", row, project_id, changes)
        for name, value in _own_settings(request).items():
            row = await self._store.set_policy(project_id, **{name: value}) or row
            asked = {"changes_requested": {name: value}}
            await self._log("project.updated", row, project_id, asked)
        if "access_rules" in request.model_fields_set:
            row = await self._set_access_rules(row, request.access_rules or [])
        return _project(row)

    async def _set_access_rules(self, row: ProjectRow, given: list[Any]) -> ProjectRow:
        rules = parse_rules(given)
        text = None if rules is None else rules.text
        row = await self._store.set_policy(row.id, access_rules=text) or row
        self._changed()
        shown = [] if rules is None else rules.shown()  # [] : none (as asked)
        await self._log(
            "project.updated", row, row.id, {"changes_requested": {"access_rules": shown}}
        )
        return row

    async def archive_project(self, project_id: str) -> admin.Project:
        await self._project(project_id)
        if project_id == DEFAULT_PROJECT:
            raise InvalidRequestError(
                "The default project cannot be archived: it holds what was stored without "
                "authentication.",
                param="project_id",
            )
        row = await self._store.archive_project(project_id, time.time())
        self._changed()
        assert row is not None
        await self._log("project.archived", row, project_id)
        return _project(row)

    # --- permissions -------------------------------------------------------------------------

    async def model_permissions(self, project_id: str) -> admin.ModelPermissions:
        """The project's model policy (no policy reads as an empty deny list: every model)."""
        policy = policy_of(await self._project(project_id))
        if policy.model_mode is None:
            return admin.ModelPermissions(mode="deny_list", model_ids=[])
        return admin.ModelPermissions(mode=policy.model_mode, model_ids=sorted(policy.model_ids))

    async def set_model_permissions(
        self, project_id: str, request: admin.UpdateModelPermissionsRequest
    ) -> admin.ModelPermissions:
        row = await self._project(project_id)
        text = model_policy_text(request.mode, request.model_ids)
        await self._store.set_policy(project_id, model_policy=text)
        self._changed()
        changes = {"changes_requested": {"model_permissions": request.model_dump()}}
        await self._log("project.updated", row, project_id, changes)
        return await self.model_permissions(project_id)

    async def clear_model_permissions(self, project_id: str) -> admin.ModelPermissionsDeleted:
        row = await self._project(project_id)
        await self._store.set_policy(project_id, model_policy=None)
        self._changed()
        changes = {"changes_requested": {"model_permissions": None}}
        await self._log("project.updated", row, project_id, changes)
        return admin.ModelPermissionsDeleted()

    async def tool_permissions(self, project_id: str) -> admin.HostedToolPermissions:
        policy = policy_of(await self._project(project_id))
        states = {
            kind: admin.ToolPermission(enabled=policy.allows_tool(kind)) for kind in HOSTED_TOOLS
        }
        return admin.HostedToolPermissions(**states)

    async def set_tool_permissions(
        self, project_id: str, request: admin.UpdateHostedToolPermissionsRequest
    ) -> admin.HostedToolPermissions:
        row = await self._project(project_id)
        policy = policy_of(row)
        denied = set(policy.denied_tools)
        for kind in HOSTED_TOOLS:
            change = getattr(request, kind)
            if change is not None:
                (denied.discard if change.enabled else denied.add)(kind)
        await self._store.set_policy(project_id, tool_policy=tool_policy_text(denied))
        self._changed()
        changes = {"changes_requested": {"hosted_tool_permissions": request.model_dump()}}
        await self._log("project.updated", row, project_id, changes)
        return await self.tool_permissions(project_id)

    # --- rate limits ---------------------------------------------------------------------------

    async def rate_limits(self, project_id: str) -> ListPage[admin.RateLimit]:
        """The project's limit on each model served (0: no limit)."""
        await self._project(project_id)
        set_ = await self._limits.limits(project_id)
        models = sorted({*self._models(), *set_})
        data = [_rate_limit(set_.get(model) or LimitRow(model)) for model in models]
        return ListPage[admin.RateLimit].of(data, has_more=False)

    async def update_rate_limit(
        self, project_id: str, limit_id: str, request: admin.UpdateRateLimitRequest
    ) -> admin.RateLimit:
        row = await self._project(project_id)
        current = await self._limits.limits(project_id)
        model = next((m for m in {*self._models(), *current} if rate_limit_id(m) == limit_id), None)
        if model is None:
            raise NotFoundError(
                f"No rate limit '{limit_id}' in this project.", param="rate_limit_id"
            )
        old = current.get(model) or LimitRow(model)
        changes = request.model_dump(include=set(_LIMIT_FIELDS), exclude_none=True)
        new = dataclasses.replace(old, **changes)
        await self._limits.set_limit(project_id, new)
        self._changed()
        await self._log("rate_limit.updated", row, limit_id, {"changes_requested": changes})
        return _rate_limit(new)

    # --- service accounts --------------------------------------------------------------------

    async def create_account(
        self, project_id: str, request: admin.CreateServiceAccountRequest
    ) -> admin.CreatedServiceAccount:
        project = await self._active(project_id)
        now = time.time()
        only = bool(request.create_service_account_only)
        if only and request.expires_in_seconds is not None:
            raise InvalidRequestError(
                "expires_in_seconds cannot be used with create_service_account_only.",
                param="expires_in_seconds",
            )
        account = ServiceAccountRow(
            id=new_id("svc_acct"),
            project_id=project_id,
            name=request.name,
            role="none" if only else "member",
            created_at=now,
        )
        made = None if only else self._new_key(account, "Secret key", request.expires_in_seconds)
        await self._store.create_account(account, made[1] if made else None)
        self._changed()
        role = {"data": {"role": account.role}}
        await self._log("service_account.created", project, account.id, role)
        if made is not None:
            await self._log("api_key.created", project, made[1].id)
        return admin.CreatedServiceAccount(
            id=account.id,
            name=account.name,
            role="none" if only else "member",
            created_at=int(now),
            api_key=None if made is None else _new_key(made[1], made[0]),
        )

    async def get_account(self, project_id: str, account_id: str) -> admin.ServiceAccount:
        await self._project(project_id)
        row = await self._store.get_account(project_id, account_id)
        if row is None:
            raise NotFoundError(
                f"No service account '{account_id}' in project '{project_id}'.",
                param="service_account_id",
            )
        return _account(row)

    async def list_accounts(
        self, project_id: str, query: ListQuery
    ) -> ListPage[admin.ServiceAccount]:
        await self._project(project_id)
        page = await self._store.list_accounts(project_id, query)
        return _list(page, _account, "service account", query.after)

    async def delete_account(self, project_id: str, account_id: str) -> admin.Deleted:
        await self.get_account(project_id, account_id)
        await self._store.delete_account(project_id, account_id)
        self._changed()
        await self._log("service_account.deleted", await self._project(project_id), account_id)
        return admin.Deleted(id=account_id, object="organization.project.service_account.deleted")

    # --- keys ----------------------------------------------------------------------------------

    async def create_key(
        self, project_id: str, account_id: str, request: admin.CreateKeyRequest
    ) -> admin.NewKey:
        scopes = scopes_text(request.scopes)
        project = await self._active(project_id)
        account = await self._store.get_account(project_id, account_id)
        if account is None:
            raise NotFoundError(
                f"No service account '{account_id}' in project '{project_id}'.",
                param="service_account_id",
            )
        value, row = self._new_key(account, request.name, request.expires_in_seconds)
        row = dataclasses.replace(row, scopes=scopes)
        await self._store.add_key(row)
        self._changed()
        await self._log("api_key.created", project, row.id, {"data": _scopes_data(scopes)})
        return _new_key(row, value)

    async def get_key(self, project_id: str, key_id: str) -> admin.ProjectKey:
        await self._project(project_id)
        found = await self._store.get_key(project_id, key_id)
        if found is None:
            raise _key_not_found(project_id, key_id)
        return await self._key(found)

    async def list_keys(self, project_id: str, query: ListQuery) -> ListPage[admin.ProjectKey]:
        await self._project(project_id)
        page = await self._store.list_keys(project_id, query)
        if page is None:
            raise NotFoundError(f"No API key with id '{query.after}' to page from.", param="after")
        data = [await self._key(found) for found in page.data]
        return ListPage[admin.ProjectKey].of(data, has_more=page.has_more)

    async def _key(self, found: KeyOwner) -> admin.ProjectKey:
        """A key as listed: a user's names the user, their project role and whether they still
        have access to the project."""
        key = found.key
        if key.user_id is None or self._people is None:
            return _key(found)
        user = await self._people.get_user(key.user_id)
        member = await self._people.get_member(key.project_id, "user", key.user_id)
        access = await self._people_access(key.user_id, key.project_id)
        owner = admin.KeyOwnerUser(
            id=key.user_id,
            email="" if user is None else user.email,
            name="" if user is None else user.name,
            role="member" if member is None else member.role,
            created_at=0 if user is None else int(user.added_at),
        )
        shaped = _key(found).model_copy(
            update={
                "owner": admin.KeyOwner(type="user", user=owner),
                "owner_project_access": "active" if access else "inactive",
            }
        )
        return shaped

    async def update_key(
        self, project_id: str, key_id: str, request: admin.UpdateKeyRequest
    ) -> admin.ProjectKey:
        """A new lifetime from now, and/or new scopes (an empty list: every permission)."""
        scopes = scopes_text(request.scopes)
        project = await self._project(project_id)
        current = await self.get_key(project_id, key_id)
        if current.expires_at is not None and current.expires_at <= time.time():
            raise InvalidRequestError(
                f"API key '{key_id}' has expired: expired keys cannot be updated.",
                param="api_key_id",
            )
        if request.expires_in_seconds is not None:
            expires_at = time.time() + request.expires_in_seconds
            if not await self._store.set_key_expiry(project_id, key_id, expires_at):
                raise _key_not_found(project_id, key_id)
            self._changed()
            changes = {"expires_in_seconds": request.expires_in_seconds}
            await self._log("api_key.updated", project, key_id, {"changes_requested": changes})
        if request.scopes is not None:
            if not await self._store.set_key_scopes(project_id, key_id, scopes):
                raise _key_not_found(project_id, key_id)
            self._changed()
            asked = {"changes_requested": _scopes_data(scopes)}
            await self._log("api_key.updated", project, key_id, asked)
        return await self.get_key(project_id, key_id)

    async def revoke_key(self, project_id: str, key_id: str) -> admin.Deleted:
        project = await self._project(project_id)
        if not await self._store.delete_key(project_id, key_id):
            raise _key_not_found(project_id, key_id)
        self._changed()
        await self._log("api_key.deleted", project, key_id)
        return admin.Deleted(id=key_id, object="organization.project.api_key.deleted")

    # --- helpers -------------------------------------------------------------------------------

    async def _log(
        self,
        kind: str,
        project: ProjectRow,
        subject: str,
        details: Mapping[str, object] | None = None,
    ) -> None:
        await self.audit.record(
            kind, subject=subject, project=(project.id, project.name), details=details
        )

    def _new_key(
        self, account: ServiceAccountRow, name: str, expires_in: int | None
    ) -> tuple[str, KeyRow]:
        value = new_key()
        now = time.time()
        row = KeyRow(
            id=new_id("key"),
            project_id=account.project_id,
            service_account_id=account.id,
            name=name,
            digest=self._hasher.digest(value),
            redacted=redact(value),
            created_at=now,
            expires_at=None if expires_in is None else now + expires_in,
        )
        return value, row

    async def _people_access(self, user_id: str, project_id: str) -> bool:
        return self._roles is not None and await self._roles.access(user_id, project_id) is not None

    async def _project(self, project_id: str) -> ProjectRow:
        row = await self._store.get_project(project_id)
        if row is None:
            raise NotFoundError(f"No project with id '{project_id}'.", param="project_id")
        return row

    async def _active(self, project_id: str) -> ProjectRow:
        row = await self._project(project_id)
        if row.archived_at is not None:
            raise InvalidRequestError(
                f"Project '{project_id}' is archived: it takes no new keys.", param="project_id"
            )
        return row


OWN_SETTINGS = ("response_timeout", "response_retention")  # agentloom's, per project


def _own_settings(request: admin.UpdateProjectRequest) -> dict[str, float | None]:
    """The project's own settings the update sets (``None``: back to the server's)."""
    asked = request.model_fields_set
    return {name: getattr(request, name) for name in OWN_SETTINGS if name in asked}


def _project(row: ProjectRow) -> admin.Project:
    archived = row.archived_at is not None
    rules = rules_of(row.access_rules)
    return admin.Project(
        id=row.id,
        name=row.name,
        created_at=int(row.created_at),
        archived_at=None if row.archived_at is None else int(row.archived_at),
        status="archived" if archived else "active",
        response_timeout=row.response_timeout,
        response_retention=row.response_retention,
        access_rules=None if rules is None else rules.shown(),
    )


def _account(row: ServiceAccountRow) -> admin.ServiceAccount:
    role = row.role if row.role in ("owner", "member", "none") else "member"
    return admin.ServiceAccount(
        id=row.id,
        name=row.name,
        role=role,
        created_at=int(row.created_at),
    )


def _new_key(row: KeyRow, value: str) -> admin.NewKey:
    return admin.NewKey(
        id=row.id,
        name=row.name,
        value=value,
        created_at=int(row.created_at),
        expires_at=None if row.expires_at is None else int(row.expires_at),
    )


def _key(found: KeyOwner) -> admin.ProjectKey:
    key, account = found.key, found.account
    owner = (
        None
        if account is None
        else admin.KeyOwnerAccount(
            id=account.id, name=account.name, role=account.role, created_at=int(account.created_at)
        )
    )
    return admin.ProjectKey(
        id=key.id,
        name=key.name,
        redacted_value=key.redacted,
        created_at=int(key.created_at),
        last_used_at=None if key.last_used_at is None else int(key.last_used_at),
        expires_at=None if key.expires_at is None else int(key.expires_at),
        owner=admin.KeyOwner(service_account=owner),
        scopes=None if key.scopes is None else json.loads(key.scopes),
    )


def _list(
    page: Page[R] | None, shape: Callable[[R], W], what: str, after: str | None
) -> ListPage[W]:
    if page is None:
        raise NotFoundError(f"No {what} with id '{after}' to page from.", param="after")
    return ListPage[W].of([shape(row) for row in page.data], has_more=page.has_more)


_LIMIT_FIELDS = ("max_requests_per_1_minute", "max_tokens_per_1_minute", "max_requests_per_1_day")


def rate_limit_id(model: str) -> str:
    """A rate limit's id: ``rl-`` and its model (a ``/`` in the id would break the path)."""
    return "rl-" + model.replace("/", "__")


def _rate_limit(row: LimitRow) -> admin.RateLimit:
    return admin.RateLimit(
        id=rate_limit_id(row.model),
        model=row.model,
        max_requests_per_1_minute=row.max_requests_per_1_minute,
        max_tokens_per_1_minute=row.max_tokens_per_1_minute,
        max_requests_per_1_day=row.max_requests_per_1_day,
    )


def _scopes_data(scopes: str | None) -> dict[str, object]:
    """A key's scopes as its audit entries show them (empty: every permission)."""
    return {"scopes": [] if scopes is None else json.loads(scopes)}


def _key_not_found(project_id: str, key_id: str) -> NotFoundError:
    return NotFoundError(f"No API key '{key_id}' in project '{project_id}'.", param="api_key_id")
