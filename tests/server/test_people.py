"""People, not only keys: users, invites, groups and roles through the official client's admin
resources, users' own keys, restricted keys refused at the edge, and who did what in the audit
log, on SQLite and PostgreSQL (and across two servers on one database)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import Settings
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import audited_client
from tests.plugins.tenants import ADMIN, Tenant, sdk

pytestmark = pytest.mark.both_databases  # what these check depends on the storage


def _admin(raw: httpx2.AsyncClient) -> Any:
    return sdk(raw, admin_api_key=ADMIN).admin.organization


async def _accept(raw: httpx2.AsyncClient, invite_id: str, name: str) -> dict[str, Any]:
    """agentloom's own route (until sign-in accepts invites)."""
    reply = await raw.post(
        f"/organization/invites/{invite_id}/accept",
        json={"name": name},
        headers={"authorization": f"Bearer {ADMIN}"},
    )
    assert reply.status_code == 200, reply.text
    user: dict[str, Any] = reply.json()
    return user


async def new_user(
    raw: httpx2.AsyncClient, email: str, projects: list[dict[str, str]] | None = None
) -> str:
    """A user of the organization (invited, then accepted), in ``projects``."""
    invite = await _admin(raw).invites.create(email=email, role="reader", projects=projects or [])
    return str((await _accept(raw, invite.id, email.partition("@")[0]))["id"])


async def user_key(
    raw: httpx2.AsyncClient, project_id: str, user_id: str, status: int = 200
) -> dict[str, Any]:
    """A key of the user's own (agentloom's route): its JSON, or the error's."""
    reply = await raw.post(
        f"/organization/projects/{project_id}/users/{user_id}/api_keys",
        json={"name": "mine"},
        headers={"authorization": f"Bearer {ADMIN}"},
    )
    assert reply.status_code == status, reply.text
    made: dict[str, Any] = reply.json()
    return made


# --- users and invites -----------------------------------------------------------------------


async def test_invites_and_users_through_the_sdk(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    org = _admin(raw)

    invite = await org.invites.create(
        email="Ada@Example.com", role="reader", projects=[{"id": alpha.project_id, "role": "owner"}]
    )
    pending = await org.invites.retrieve(invite.id)
    listed = [i.id async for i in org.invites.list()]
    user = await _accept(raw, invite.id, "Ada")
    accepted = await org.invites.retrieve(invite.id)
    users = [u async for u in org.users.list()]
    by_email = [u.id async for u in org.users.list(emails=["ADA@example.com"])]
    promoted = await org.users.update(user["id"], role="owner")
    in_project = await org.projects.users.retrieve(user["id"], project_id=alpha.project_id)

    assert (invite.object, invite.status, invite.email) == (
        "organization.invite",
        "pending",
        "ada@example.com",
    )
    assert [p.id for p in pending.projects] == [alpha.project_id]
    assert listed == [invite.id]
    assert (accepted.status, accepted.accepted_at is not None) == ("accepted", True)
    assert [(u.email, u.name, u.role) for u in users] == [("ada@example.com", "Ada", "reader")]
    assert by_email == [user["id"]]
    assert promoted.role == "owner"
    assert (in_project.role, in_project.email) == ("owner", "ada@example.com")
    with pytest.raises(openai.ConflictError):  # a user already
        await org.invites.create(email="ada@example.com", role="reader")
    with pytest.raises(openai.BadRequestError):  # accepted: remove the user instead
        await org.invites.delete(invite.id)

    other = await org.invites.create(email="bob@example.com", role="owner")
    assert [p.id for p in other.projects] == ["proj_default"]  # omitted: the default project
    assert (await org.invites.delete(other.id)).deleted
    gone = await org.users.delete(user["id"])
    assert (gone.id, gone.deleted) == (user["id"], True)
    with pytest.raises(openai.NotFoundError):
        await org.users.retrieve(user["id"])
    with pytest.raises(openai.NotFoundError):
        await org.projects.users.retrieve(user["id"], project_id=alpha.project_id)


async def test_a_projects_users_through_the_sdk(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    users = _admin(raw).projects.users
    ada = await new_user(raw, "ada@example.com")

    added = await users.create(alpha.project_id, role="member", email="ada@example.com")
    listed = [u.id async for u in users.list(alpha.project_id)]
    owner = await users.update(ada, project_id=alpha.project_id, role="owner")

    assert (added.object, added.id, added.role) == ("organization.project.user", ada, "member")
    assert listed == [ada]
    assert owner.role == "owner"
    with pytest.raises(openai.ConflictError):
        await users.create(alpha.project_id, role="member", user_id=ada)
    assert (await users.delete(ada, project_id=alpha.project_id)).deleted
    assert [u.id async for u in users.list(alpha.project_id)] == []
    with pytest.raises(openai.NotFoundError):
        await users.create(alpha.project_id, role="member", user_id="user-missing")


# --- groups and roles ------------------------------------------------------------------------


async def test_groups_and_their_users_through_the_sdk(raw: httpx2.AsyncClient) -> None:
    groups = _admin(raw).groups
    ada = await new_user(raw, "ada@example.com")

    made = await groups.create(name="research")
    renamed = await groups.update(made.id, name="lab")
    added = await groups.users.create(made.id, user_id=ada)
    members = [u async for u in groups.users.list(made.id)]
    member = await groups.users.retrieve(ada, group_id=made.id)
    listed = [g.name async for g in groups.list()]

    assert (made.name, made.group_type, made.is_scim_managed) == ("research", "group", False)
    assert renamed.name == "lab"
    assert (added.group_id, added.user_id) == (made.id, ada)
    assert [(u.id, u.email) for u in members] == [(ada, "ada@example.com")]
    assert member.name == "ada"
    assert listed == ["lab"]
    with pytest.raises(openai.ConflictError):
        await groups.users.create(made.id, user_id=ada)
    assert (await groups.users.delete(ada, group_id=made.id)).deleted
    assert (await groups.delete(made.id)).deleted
    with pytest.raises(openai.NotFoundError):
        await groups.retrieve(made.id)


async def test_roles_and_their_assignments_through_the_sdk(raw: httpx2.AsyncClient) -> None:
    org = _admin(raw)
    ada = await new_user(raw, "ada@example.com")
    group = await org.groups.create(name="auditors")

    predefined = [r async for r in org.roles.list()]
    role = await org.roles.create(
        role_name="auditor", permissions=["api.all.read"], description="reads"
    )
    changed = await org.roles.update(role.id, permissions=["api.files.read"])
    for_user = await org.users.roles.create(ada, role_id=role.id)
    for_group = await org.groups.roles.create(group.id, role_id=role.id)
    held = [r async for r in org.users.roles.list(ada)]
    one = await org.groups.roles.retrieve(role.id, group_id=group.id)

    assert {(r.name, r.predefined_role) for r in predefined} == {
        ("owner", True),
        ("reader", True),
    }
    assert (role.object, role.resource_type, role.permissions) == (
        "role",
        "api.organization",
        ["api.all.read"],
    )
    assert changed.permissions == ["api.files.read"]
    assert (for_user.user.id, for_user.role.id) == (ada, role.id)
    assert (for_group.group.id, for_group.object) == (group.id, "group.role")
    assert [r.id for r in held] == [role.id]
    assert one.assignment_sources is not None
    assert one.assignment_sources[0].principal_id == group.id
    with pytest.raises(openai.BadRequestError) as unknown:
        await org.roles.create(role_name="x", permissions=["api.everything"])
    assert unknown.value.param == "permissions"
    with pytest.raises(openai.BadRequestError):  # predefined roles stay as they are
        await org.roles.delete("role_org_owner")
    with pytest.raises(openai.ConflictError):
        await org.roles.create(role_name="auditor", permissions=[])
    assert (await org.users.roles.delete(role.id, user_id=ada)).deleted
    assert (await org.roles.delete(role.id)).deleted
    assert [r async for r in org.groups.roles.list(group.id)] == []


async def test_a_projects_groups_and_roles_through_the_sdk(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant
) -> None:
    projects = _admin(raw).projects
    ada = await new_user(raw, "ada@example.com", [{"id": alpha.project_id, "role": "member"}])
    group = await _admin(raw).groups.create(name="readers")

    role = await projects.roles.create(
        alpha.project_id, role_name="reader", permissions=["api.all.read"]
    )
    roles = [r.id async for r in projects.roles.list(alpha.project_id)]
    in_project = await projects.groups.create(alpha.project_id, group_id=group.id, role=role.id)
    groups = [g.group_id async for g in projects.groups.list(alpha.project_id)]
    held = await projects.users.roles.create(ada, project_id=alpha.project_id, role_id=role.id)
    assigned = [r.id async for r in projects.users.roles.list(ada, project_id=alpha.project_id)]

    assert set(roles) == {"role_project_owner", "role_project_member", role.id}
    assert (in_project.object, in_project.group_name) == ("project.group", "readers")
    assert groups == [group.id]
    assert held.role.id == role.id
    assert assigned == [role.id]
    with pytest.raises(openai.NotFoundError):  # another project's role
        await projects.roles.retrieve(role.id, project_id=beta.project_id)
    with pytest.raises(openai.NotFoundError):
        await projects.groups.create(beta.project_id, group_id=group.id, role=role.id)
    unassigned = await projects.users.roles.delete(
        role.id, project_id=alpha.project_id, user_id=ada
    )
    assert unassigned.deleted
    removed = await projects.groups.delete(group.id, project_id=alpha.project_id)
    assert removed.deleted


async def test_the_rest_of_the_role_shapes_through_the_sdk(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    org = _admin(raw)
    projects = org.projects
    ada = await new_user(raw, "ada@example.com", [{"id": alpha.project_id, "role": "member"}])
    group = await org.groups.create(name="ops")
    role = await projects.roles.create(alpha.project_id, role_name="ops", permissions=[])

    renamed = await projects.roles.update(
        role.id, project_id=alpha.project_id, role_name="operators", description="they operate"
    )
    fetched = await projects.roles.retrieve(role.id, project_id=alpha.project_id)
    await projects.groups.create(alpha.project_id, group_id=group.id, role="role_project_member")
    in_project = await projects.groups.retrieve(group.id, project_id=alpha.project_id)
    held = await projects.groups.roles.create(
        group.id, project_id=alpha.project_id, role_id=role.id
    )
    listed = [r.id async for r in projects.groups.roles.list(group.id, project_id=alpha.project_id)]
    one = await projects.groups.roles.retrieve(
        role.id, project_id=alpha.project_id, group_id=group.id
    )
    mine = await projects.users.roles.create(ada, project_id=alpha.project_id, role_id=role.id)
    again = await projects.users.roles.retrieve(role.id, project_id=alpha.project_id, user_id=ada)
    promoted = await org.users.update(ada, role_id="role_org_owner")
    org_held = await org.users.roles.create(ada, role_id="role_org_reader")
    org_one = await org.users.roles.retrieve("role_org_reader", user_id=ada)

    assert (renamed.name, fetched.description) == ("operators", "they operate")
    assert (in_project.group_id, in_project.project_id) == (group.id, alpha.project_id)
    assert held.group.id == group.id
    assert listed == [role.id]
    assert (one.id, one.permissions) == (role.id, [])
    assert (mine.user.id, again.name) == (ada, "operators")
    assert promoted.role == "owner"
    assert org_held.role.predefined_role
    assert org_one.resource_type == "api.organization"
    with pytest.raises(openai.NotFoundError):  # an organization role is not a project's
        await projects.users.roles.create(
            ada, project_id=alpha.project_id, role_id="role_org_reader"
        )
    gone = await projects.groups.roles.delete(
        role.id, project_id=alpha.project_id, group_id=group.id
    )
    assert gone.deleted
    assert (await projects.roles.delete(role.id, project_id=alpha.project_id)).deleted
    assert [r async for r in projects.users.roles.list(ada, project_id=alpha.project_id)] == []
    assert (await org.groups.roles.list(group.id)).data == []


# --- keys: a user's own, restricted ones ----------------------------------------------------


async def test_a_restricted_key_is_refused_what_its_scopes_do_not_grant(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    projects = _admin(raw).projects
    account = await projects.service_accounts.create(
        alpha.project_id, name="bot", create_service_account_only=True
    )
    made = await projects.service_accounts.api_keys.create(
        account.id, project_id=alpha.project_id, scopes=["api.model.read", "api.files.read"]
    )
    restricted = sdk(raw, made.value)

    assert (await restricted.models.list()).data is not None
    assert (await restricted.files.list()).data == []
    with pytest.raises(openai.PermissionDeniedError) as refused:
        await restricted.responses.create(model=backend.model, input="Hi")
    assert "Missing scopes: api.responses.write" in refused.value.message
    assert refused.value.code == "missing_scope"
    with pytest.raises(openai.PermissionDeniedError) as refused:
        await restricted.files.create(file=("a.txt", b"hello"), purpose="assistants")
    assert "api.files.write" in refused.value.message
    with pytest.raises(openai.PermissionDeniedError):  # a model call is api.model.request
        await restricted.chat.completions.create(
            model=backend.model, messages=[{"role": "user", "content": "Hi"}]
        )

    shown = await projects.api_keys.retrieve(made.id, project_id=alpha.project_id)
    assert shown.model_dump()["scopes"] == ["api.files.read", "api.model.read"]
    await projects.api_keys.update(made.id, project_id=alpha.project_id, scopes=["api.all.read"])
    assert (await restricted.files.list()).data == []
    with pytest.raises(openai.PermissionDeniedError):
        await restricted.files.create(file=("a.txt", b"hello"), purpose="assistants")
    await projects.api_keys.update(made.id, project_id=alpha.project_id, scopes=[])  # all again
    assert (await restricted.responses.create(model=backend.model, input="Hi")).id
    with pytest.raises(openai.BadRequestError) as unknown:
        await projects.service_accounts.api_keys.create(
            account.id, project_id=alpha.project_id, scopes=["api.nothing"]
        )
    assert unknown.value.param == "scopes"


async def test_a_users_key_does_what_their_key_and_roles_both_grant(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    org = _admin(raw)
    ada = await new_user(raw, "ada@example.com")
    refused = await user_key(raw, alpha.project_id, ada, status=400)  # no access to it yet
    assert refused["error"]["param"] == "user_id"
    group = await org.groups.create(name="readers")
    await org.groups.users.create(group.id, user_id=ada)
    role = await org.projects.roles.create(
        alpha.project_id, role_name="reader", permissions=["api.model.read", "api.files.read"]
    )
    await org.projects.groups.create(alpha.project_id, group_id=group.id, role=role.id)

    made = await user_key(raw, alpha.project_id, ada)
    as_ada = sdk(raw, made["value"])
    listed = [k async for k in org.projects.api_keys.list(alpha.project_id)]

    assert made["object"] == "organization.project.user.api_key"
    assert (await as_ada.models.list()).data is not None
    with pytest.raises(openai.PermissionDeniedError) as refused:
        await as_ada.responses.create(model=backend.model, input="Hi")
    assert "roles of this key's user" in refused.value.message
    mine = next(k for k in listed if k.id == made["id"])
    assert mine.owner.type == "user"
    assert mine.owner.user is not None
    assert (mine.owner.user.email, mine.owner_project_access) == ("ada@example.com", "active")

    await org.projects.users.create(alpha.project_id, role="member", user_id=ada)  # full access
    assert (await as_ada.responses.create(model=backend.model, input="Hi")).id
    await org.projects.users.delete(ada, project_id=alpha.project_id)
    await org.groups.users.delete(ada, group_id=group.id)  # no access left: the key stops
    with pytest.raises(openai.AuthenticationError):
        await as_ada.models.list()
    inactive = await org.projects.api_keys.retrieve(made["id"], project_id=alpha.project_id)
    assert inactive.owner_project_access == "inactive"


# --- the audit log ---------------------------------------------------------------------------


async def test_the_audit_log_names_who_changed_what(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    org = _admin(raw)
    ada = await new_user(raw, "ada@example.com", [{"id": alpha.project_id, "role": "member"}])
    made = await user_key(raw, alpha.project_id, ada)
    as_ada = sdk(raw, made["value"])

    uploaded = await as_ada.files.create(file=("a.txt", b"hello"), purpose="assistants")
    await as_ada.files.delete(uploaded.id)
    await alpha.client.files.create(file=("b.txt", b"hi"), purpose="assistants")
    by_ada = [e async for e in org.audit_logs.list(actor_ids=[ada])]
    by_key = [e.type async for e in org.audit_logs.list(actor_ids=[made["id"]])]
    by_account = (await org.audit_logs.list(actor_ids=[alpha.key_id])).data
    admin_made = (await org.audit_logs.list(event_types=["invite.sent"])).data

    assert [e.type for e in by_ada] == ["resource.deleted", "resource.created"]
    actor = by_ada[1].actor
    assert actor is not None
    assert actor.api_key is not None
    assert (actor.type, actor.api_key.type, actor.api_key.id) == ("api_key", "user", made["id"])
    assert actor.api_key.user is not None
    assert (actor.api_key.user.id, actor.api_key.user.email) == (ada, "ada@example.com")
    created = by_ada[1].model_dump()["resource.created"]
    assert (created["id"], created["resource"]) == (uploaded.id, "files")
    assert by_key == ["resource.deleted", "resource.created"]
    account_actor = by_account[0].actor
    assert account_actor is not None
    assert account_actor.api_key is not None
    assert account_actor.api_key.type == "service_account"
    assert admin_made[0].actor is not None
    assert admin_made[0].actor.api_key is not None
    assert admin_made[0].actor.api_key.id == "admin"


# --- several servers on one database ---------------------------------------------------------


async def _refused_soon(call: Any, error: type[Exception]) -> bool:
    for _ in range(100):  # the watch interval is 0.05 s
        try:
            await call()
        except error:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_a_change_of_scopes_or_people_reaches_another_server(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    org = _admin(raw)
    ada = await new_user(raw, "ada@example.com", [{"id": alpha.project_id, "role": "member"}])
    made = await user_key(raw, alpha.project_id, ada)
    async with audited_client(keyed) as other:
        tenant_there = sdk(other, alpha.key)
        ada_there = sdk(other, made["value"])
        assert (await tenant_there.files.list()).data is not None  # both cached there
        assert (await ada_there.files.list()).data is not None

        await org.projects.api_keys.update(
            alpha.key_id, project_id=alpha.project_id, scopes=["api.model.read"]
        )
        restricted = await _refused_soon(tenant_there.files.list, openai.PermissionDeniedError)
        await org.projects.users.delete(ada, project_id=alpha.project_id)
        removed = await _refused_soon(ada_there.files.list, openai.AuthenticationError)

    assert restricted, "the other server still lets the key list files after 2 s"
    assert removed, "the other server still accepts the removed user's key after 2 s"
