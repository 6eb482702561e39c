"""Owners and access rules (issue 41): the access walk. One user of a project makes one of every
stored object; under the project's rules every route with an object's id is walked as its owner,
as a member of the owner's group, as another user of the project and as another project, on
SQLite and PostgreSQL (and through a second server on the same database)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import openai
import pytest
import sqlalchemy as sa
from starlette.routing import Route

from agentloom.access_rules import RESOURCES
from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import audited_client
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk
from tests.server.test_background import settled
from tests.server.test_people import new_user, user_key
from tests.server.test_tenancy import _UNOWNED, _body, _filled, make_everything, references

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

PRIVATE: list[dict[str, Any]] = [
    {"forbid": {"actions": ["read", "update", "delete"]}, "unless": "user is owner"}
]
SHARED_READS: list[dict[str, Any]] = [
    {"permit": {"actions": ["read"]}, "when": "user in owners groups"},
    *PRIVATE,
]
# Objects without an owner (the project's configuration): every key of the project sees them.
# The project's configuration and records, not objects with owners (the request log: the
# project's traffic, as its usage is)
_PROJECT_WIDE = ("/v1/webhook_endpoints", "/v1/mcp_connectors", "/v1/traces", "/v1/requests")


async def make_all(tenant: Tenant, backend: FakeBackend) -> dict[str, str]:
    """One of every stored object, made by ``tenant``: their ids by path parameter."""
    ids = (await make_everything(tenant, backend)).ids
    completion = await tenant.client.chat.completions.create(
        model=backend.model, messages=[{"role": "user", "content": "Hi"}], store=True
    )
    return {**ids, "completion_id": completion.id}


_READS = ("POST /v1/vector_stores/{vector_store_id}/search",)  # a POST that reads


def _admin(raw: httpx2.AsyncClient) -> Any:
    return sdk(raw, admin_api_key=ADMIN).admin.organization


async def set_rules(raw: httpx2.AsyncClient, project_id: str, rules: list[Any]) -> Any:
    projects = _admin(raw).projects
    name = (await projects.retrieve(project_id)).name
    return await projects.update(project_id, name=name, extra_body={"access_rules": rules})


async def person(raw: httpx2.AsyncClient, tenant: Tenant, email: str) -> tuple[str, Tenant]:
    """A user of ``tenant``'s project with a key of their own: their id and their tenant."""
    user_id = await new_user(raw, email, [{"id": tenant.project_id, "role": "member"}])
    made = await user_key(raw, tenant.project_id, user_id)
    return user_id, Tenant(tenant.project_id, made["value"], made["id"], sdk(raw, made["value"]))


async def team(raw: httpx2.AsyncClient, alpha: Tenant) -> tuple[Tenant, Tenant, Tenant]:
    """Ada (who makes things), Bob (in a group with Ada) and Carol (in the project, not in
    the group), each with a key of their own in ``alpha``'s project."""
    ada_id, ada = await person(raw, alpha, "ada@example.com")
    bob_id, bob = await person(raw, alpha, "bob@example.com")
    _, carol = await person(raw, alpha, "carol@example.com")
    group = await _admin(raw).groups.create(name="lab")
    for user_id in (ada_id, bob_id):
        await _admin(raw).groups.users.create(group.id, user_id=user_id)
    return ada, bob, carol


def _routes(keyed: Settings) -> list[Route]:
    """The routes with an object's id in their path, but the admin key's."""
    return [
        r
        for r in create_app(keyed).routes
        if isinstance(r, Route)
        and "{" in r.path
        and not r.path.startswith(("/v1/organization/", "/v1/projects/", *_PROJECT_WIDE))
        and not set(r.param_convertors) & _UNOWNED
    ]


async def walk(
    raw: httpx2.AsyncClient, keyed: Settings, viewer: Tenant, ids: dict[str, str], method: str
) -> dict[str, int]:
    """The status of every route with an id for ``method``, as ``viewer``."""
    found: dict[str, int] = {}
    for route in _routes(keyed):
        if method not in (route.methods or set()):
            continue
        path = _filled(route.path, ids)
        reply = await raw.request(method, path, headers=viewer.headers, json=_body(route.path, ids))
        found[f"{method} {route.path}"] = reply.status_code
    return found


def _not_404(found: dict[str, int]) -> str:
    return "\n".join(f"{name}: {status}" for name, status in found.items() if status == 404)


async def _listed(viewer: Tenant) -> dict[str, list[str]]:
    """The ids every list route shows ``viewer``."""
    client = viewer.client
    lists = {
        "responses": (await client.get("/responses", cast_to=httpx2.Response)).json()["data"],
        "prompts": (await client.get("/prompts", cast_to=httpx2.Response)).json()["data"],
        "managed_agents": (await client.get("/managed-agents", cast_to=httpx2.Response)).json()[
            "data"
        ],
        "conversations": (await client.get("/conversations", cast_to=httpx2.Response)).json()[
            "data"
        ],
    }
    shown = {name: [row["id"] for row in rows] for name, rows in lists.items()}
    shown["files"] = [f.id for f in (await client.files.list()).data]
    shown["vector_stores"] = [v.id for v in (await client.vector_stores.list()).data]
    shown["containers"] = [c.id for c in (await client.containers.list()).data]
    shown["batches"] = [b.id for b in (await client.batches.list()).data]
    shown["chat_completions"] = [c.id for c in (await client.chat.completions.list()).data]
    return shown


# --- the walk --------------------------------------------------------------------------------


async def test_private_objects_are_404_to_another_user_of_the_project(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, _, carol = await team(raw, alpha)
    shown = await set_rules(raw, alpha.project_id, PRIVATE)
    ids = await make_all(ada, backend)

    refused: dict[str, int] = {}
    for method in ("GET", "POST", "DELETE"):  # deletes last: nothing of Ada's may go
        refused |= await walk(raw, keyed, carol, ids, method)
    owners = await walk(raw, keyed, ada, ids, "GET")
    carol_sees = await _listed(carol)
    ada_sees = await _listed(ada)

    assert shown.model_dump()["access_rules"] == PRIVATE
    assert len(refused) >= 30
    leaked = [f"{name}: {status}" for name, status in refused.items() if status != 404]
    assert not leaked, "\n".join(leaked)
    assert not _not_404(owners), _not_404(owners)
    assert {name: shown for name, shown in carol_sees.items() if shown} == {}
    assert all(ada_sees.values()), ada_sees  # every kind listed for its owner


async def test_a_group_member_reads_but_does_not_change(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, bob, carol = await team(raw, alpha)
    await set_rules(raw, alpha.project_id, SHARED_READS)
    ids = await make_all(ada, backend)

    reads = await walk(raw, keyed, bob, ids, "GET")
    changes = await walk(raw, keyed, bob, ids, "POST")
    deletes = await walk(raw, keyed, bob, ids, "DELETE")
    bob_sees = await _listed(bob)
    carol_sees = await _listed(carol)
    response = await bob.client.responses.retrieve(ids["response_id"])

    assert not _not_404(reads), _not_404(reads)
    kept = [f"{name}: {s}" for name, s in deletes.items() if s != 404]
    assert not kept, "\n".join(kept)
    changed = [f"{name}: {s}" for name, s in changes.items() if s != 404 and name not in _READS]
    assert not changed, "\n".join(changed)
    assert all(changes[name] == 200 for name in _READS), changes
    assert all(bob_sees.values()), bob_sees
    assert not any(carol_sees.values()), carol_sees
    assert response.id == ids["response_id"]
    with pytest.raises(openai.NotFoundError):
        await bob.client.conversations.update(ids["conversation_id"], metadata={"k": "v"})
    with pytest.raises(openai.NotFoundError):
        await bob.client.vector_stores.update(ids["vector_store_id"], name="mine now")
    await ada.client.conversations.update(ids["conversation_id"], metadata={"k": "v"})


async def test_references_to_private_objects_are_404(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, _, carol = await team(raw, alpha)
    await set_rules(raw, alpha.project_id, PRIVATE)
    theirs = await make_all(ada, backend)
    model = backend.model
    attempts = references(carol, model, theirs)

    missed = []
    for name, attempt in attempts.items():
        try:
            await attempt
            missed.append(name)
        except openai.NotFoundError:
            pass
    assert missed == []
    # Ada's own references still work
    follow = await ada.client.responses.create(
        model=model, input="Again", previous_response_id=theirs["response_id"]
    )
    assert follow.previous_response_id == theirs["response_id"]


async def test_another_project_is_404_under_rules_too(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    ada, _, _ = await team(raw, alpha)
    await set_rules(raw, alpha.project_id, SHARED_READS)
    ids = await make_all(ada, backend)

    found = await walk(raw, keyed, beta, ids, "GET")

    assert [f"{name}: {s}" for name, s in found.items() if s != 404] == []
    assert not any((await _listed(beta)).values())


async def test_a_role_rule_and_the_admin_key_see_everything(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, _, carol = await team(raw, alpha)
    org = _admin(raw)
    role = await org.projects.roles.create(alpha.project_id, role_name="auditor", permissions=[])
    users = [u async for u in org.projects.users.list(alpha.project_id)]
    carol_user = next(u.id for u in users if u.email == "carol@example.com")
    await org.projects.users.roles.create(carol_user, project_id=alpha.project_id, role_id=role.id)
    rules = [{"permit": {"actions": ["read"]}, "when": "user with auditor in roles"}, *PRIVATE]
    await set_rules(raw, alpha.project_id, rules)
    made = await ada.client.responses.create(model=backend.model, input="Hi")
    admin = sdk(raw, ADMIN, project=alpha.project_id)

    assert (await carol.client.responses.retrieve(made.id)).id == made.id
    assert (await admin.responses.retrieve(made.id)).id == made.id
    with pytest.raises(openai.NotFoundError):
        await carol.client.responses.delete(made.id)
    with pytest.raises(openai.NotFoundError):  # a service account's key: not the owner
        await alpha.client.responses.retrieve(made.id)
    await set_rules(raw, alpha.project_id, [])  # no rules: as before
    assert (await alpha.client.responses.retrieve(made.id)).id == made.id
    await carol.client.responses.delete(made.id)
    with pytest.raises(openai.NotFoundError):
        await ada.client.responses.retrieve(made.id)


async def test_rules_set_on_one_server_apply_on_another(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, _, carol = await team(raw, alpha)
    ids = await make_all(ada, backend)
    async with audited_client(keyed) as other:
        carol_there = Tenant(carol.project_id, carol.key, carol.key_id, sdk(other, carol.key))
        assert (await carol_there.client.responses.retrieve(ids["response_id"])).id  # cached

        await set_rules(raw, alpha.project_id, PRIVATE)
        hidden = await _refused_soon(
            lambda: carol_there.client.responses.retrieve(ids["response_id"])
        )
        found = await walk(other, keyed, carol_there, ids, "GET")
        listed = await _listed(carol_there)

    assert hidden, "the other server still shows Ada's response to Carol after 2 s"
    leaked = [f"{name}: {status}" for name, status in found.items() if status != 404]
    assert not leaked, "\n".join(leaked)
    assert not any(listed.values()), listed


async def _refused_soon(call: Any) -> bool:
    for _ in range(100):  # the watch interval is 0.05 s
        try:
            await call()
        except openai.NotFoundError:
            return True
        await asyncio.sleep(0.02)
    return False


# --- the rules on a project ------------------------------------------------------------------


async def test_a_bad_rule_is_a_400_naming_it(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    projects = _admin(raw).projects
    bad = [*PRIVATE, {"permit": {"actions": ["read"]}, "when": "user is the boss"}]

    with pytest.raises(openai.BadRequestError) as on_create:
        await projects.create(name="x", extra_body={"access_rules": bad})
    with pytest.raises(openai.BadRequestError) as on_update:
        await set_rules(raw, alpha.project_id, [{"permit": {"actions": ["write"]}}])
    kept = await projects.retrieve(alpha.project_id)

    assert on_create.value.param == "access_rules[1]"
    assert on_create.value.code == "invalid_access_rule"
    assert "user is the boss" in on_create.value.message
    assert "access rule 1" in on_create.value.message
    assert on_update.value.param == "access_rules[0]"
    assert "unknown action 'write'" in on_update.value.message
    assert kept.model_dump().get("access_rules") is None


async def test_rules_are_shown_on_the_project_and_cleared(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    projects = _admin(raw).projects
    made = await projects.create(name="private", extra_body={"access_rules": PRIVATE})
    fetched = await projects.retrieve(made.id)
    cleared = await set_rules(raw, made.id, [])
    logged = [e async for e in _admin(raw).audit_logs.list(project_ids=[made.id])]

    assert made.model_dump()["access_rules"] == PRIVATE
    assert fetched.model_dump()["access_rules"] == PRIVATE
    assert cleared.model_dump().get("access_rules") is None
    assert logged, "the rules' changes are in the audit log"


# --- background work -------------------------------------------------------------------------


async def test_background_work_keeps_its_owner(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, _, carol = await team(raw, alpha)
    await set_rules(raw, alpha.project_id, PRIVATE)
    conversation = await ada.client.conversations.create()

    queued = await ada.client.responses.create(
        model=backend.model, input="Hi", background=True, conversation=conversation.id
    )
    final = await settled(ada.client, queued.id)
    items = await ada.client.conversations.items.list(conversation.id)
    follow = await ada.client.responses.create(
        model=backend.model, input="Again", previous_response_id=queued.id
    )

    assert final.status == "completed"
    assert len(items.data) >= 2  # the input and the answer, appended by the background run
    assert follow.status == "completed"
    with pytest.raises(openai.NotFoundError):
        await carol.client.responses.retrieve(queued.id)
    with pytest.raises(openai.NotFoundError):
        await carol.client.responses.cancel(queued.id)
    with pytest.raises(openai.NotFoundError):
        await carol.client.conversations.items.list(conversation.id)


async def test_every_object_records_its_owner(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    ada, _, _ = await team(raw, alpha)
    users = [u async for u in _admin(raw).projects.users.list(alpha.project_id)]
    ada_id = next(u.id for u in users if u.email == "ada@example.com")
    await make_all(ada, backend)
    queued = await ada.client.responses.create(model=backend.model, input="Hi", background=True)
    await settled(ada.client, queued.id)
    await alpha.client.files.create(file=("a.txt", b"by the service account"), purpose="user_data")
    database = await Database.connect(keyed.database.url, instance_id="inst_inspect")

    def owners(conn: sa.Connection) -> dict[str, set[str | None]]:
        found: dict[str, set[str | None]] = {}
        for kind in RESOURCES:
            table = schema.metadata.tables[kind]
            query = sa.select(table.c.owner).where(table.c.project_id == alpha.project_id)
            found[kind] = set(conn.scalars(query))
        return found

    try:
        found = await database.runner.read(owners)
    finally:
        await database.aclose()

    accounts = [a async for a in _admin(raw).projects.service_accounts.list(alpha.project_id)]
    assert found.pop("files") == {ada_id, accounts[0].id}
    assert found == {kind: {ada_id} for kind in found}


# --- the server's default --------------------------------------------------------------------


async def test_the_servers_default_rules_hold_where_a_project_has_none(
    keyed: Settings, backend: FakeBackend
) -> None:
    """``[auth] access_rules`` are the rules of every project without rules of its own (shown
    as none on the project); a project's own rules replace them, whatever they say."""
    auth = keyed.auth.model_copy(update={"access_rules": PRIVATE})
    async with audited_client(keyed.model_copy(update={"auth": auth})) as raw:
        alpha = await new_tenant(raw, "alpha")
        ada, _, carol = await team(raw, alpha)
        made = await ada.client.responses.create(model=backend.model, input="mine")
        with pytest.raises(openai.NotFoundError):
            await carol.client.responses.retrieve(made.id)
        shown = await _admin(raw).projects.retrieve(alpha.project_id)
        own = [{"permit": {"actions": ["create", "read", "update", "delete"]}}]
        await set_rules(raw, alpha.project_id, own)  # the project's own: everything open
        seen = await carol.client.responses.retrieve(made.id)
        await set_rules(raw, alpha.project_id, [])  # none of its own: the default again
        with pytest.raises(openai.NotFoundError):
            await carol.client.responses.retrieve(made.id)
        owner_sees = await ada.client.responses.retrieve(made.id)

    assert shown.model_dump().get("access_rules") is None
    assert seen.id == owner_sees.id == made.id
