"""Projects and API keys: the admin API through the official client, authentication, and
isolation (another project's ids are a 404 from every route), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
import pytest
import sqlalchemy as sa
from starlette.routing import Route

from agentloom.config import Settings
from agentloom.server.app import create_app
from agentloom.storage import schema
from agentloom.storage.database import Database
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL, audited_client
from tests.plugins.tenants import ADMIN, Tenant, sdk

pytestmark = pytest.mark.both_databases  # what these check depends on the storage


def error_of(reply: httpx2.Response, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error: dict[str, Any] = reply.json()["error"]
    return error


# --- authentication ------------------------------------------------------------------------


async def test_every_v1_route_needs_a_valid_key(raw: httpx2.AsyncClient) -> None:
    missing = error_of(await raw.get("/responses"), 401)
    wrong = error_of(await raw.get("/files", headers={"authorization": "Bearer sk-proj-x"}), 401)
    basic = error_of(await raw.get("/models", headers={"authorization": "Basic abc"}), 401)

    assert missing["code"] == wrong["code"] == basic["code"] == "invalid_api_key"
    assert "Authorization" in missing["message"]
    assert "sk-proj-x" not in wrong["message"]  # the key is never echoed whole
    assert (await raw.get("/health")).status_code == 200


async def test_a_key_works_until_it_is_revoked(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    admin = sdk(raw, admin_api_key=ADMIN).admin.organization.projects

    assert (await alpha.client.models.list()).data is not None
    await admin.api_keys.delete(alpha.key_id, project_id=alpha.project_id)

    with pytest.raises(openai.AuthenticationError) as refused:
        await alpha.client.models.list()
    assert refused.value.code == "invalid_api_key"


async def test_an_archived_projects_keys_stop_working(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    admin = sdk(raw, admin_api_key=ADMIN).admin.organization.projects

    archived = await admin.archive(alpha.project_id)

    assert (archived.status, archived.archived_at is not None) == ("archived", True)
    with pytest.raises(openai.AuthenticationError):
        await alpha.client.models.list()
    listed = [p.id async for p in admin.list()]
    everything = [p.id async for p in admin.list(include_archived=True)]
    assert alpha.project_id not in listed
    assert alpha.project_id in everything
    with pytest.raises(openai.BadRequestError):
        await admin.service_accounts.create(alpha.project_id, name="late")


async def test_a_project_key_cannot_use_the_admin_api(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    projects = sdk(raw, admin_api_key=alpha.key).admin.organization.projects

    with pytest.raises(openai.PermissionDeniedError):
        await projects.list()


async def test_the_admin_key_works_in_a_project_it_names(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    created = await alpha.client.responses.create(model=backend.model, input="Hi")
    named = sdk(raw, ADMIN, project=alpha.project_id)
    unnamed = sdk(raw, ADMIN)
    wrong = sdk(raw, alpha.key, project="proj_other")

    assert (await named.responses.retrieve(created.id)).id == created.id
    with pytest.raises(openai.PermissionDeniedError):
        await unnamed.responses.retrieve(created.id)
    with pytest.raises(openai.AuthenticationError) as mismatched:
        await wrong.responses.retrieve(created.id)
    assert mismatched.value.code == "mismatched_project"


async def test_an_expired_key_is_refused(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    accounts = sdk(raw, admin_api_key=ADMIN).admin.organization.projects.service_accounts
    account = await accounts.create(alpha.project_id, name="short", expires_in_seconds=60)
    assert account.api_key is not None
    assert account.api_key.expires_at is not None
    key = account.api_key.value
    keys = sdk(raw, admin_api_key=ADMIN).admin.organization.projects.api_keys
    listed = await keys.retrieve(account.api_key.id, project_id=alpha.project_id)

    assert listed.expires_at == account.api_key.expires_at
    assert (await sdk(raw, key).models.list()).data is not None


# --- the admin API ---------------------------------------------------------------------------


async def test_projects_service_accounts_and_keys_through_the_sdk(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects

    renamed = await projects.update(alpha.project_id, name="alpha prime")
    fetched = await projects.retrieve(alpha.project_id)
    second = await projects.service_accounts.create(alpha.project_id, name="deployer")
    accounts = [a async for a in projects.service_accounts.list(alpha.project_id)]
    keys = [k async for k in projects.api_keys.list(alpha.project_id)]

    assert (renamed.name, fetched.name, fetched.status) == ("alpha prime", "alpha prime", "active")
    assert [a.name for a in accounts] == ["ci", "deployer"]
    assert {a.role for a in accounts} == {"member"}
    assert len(keys) == 2
    assert all(k.redacted_value.startswith("sk-proj-") and "..." in k.redacted_value for k in keys)
    assert second.api_key is not None
    assert second.api_key.value not in {k.redacted_value for k in keys}
    assert {k.owner.service_account.name for k in keys if k.owner.service_account} == {
        "ci",
        "deployer",
    }
    gone = await projects.service_accounts.delete(second.id, project_id=alpha.project_id)
    assert gone.deleted
    with pytest.raises(openai.AuthenticationError):
        await sdk(raw, second.api_key.value).models.list()


async def test_a_key_made_for_an_existing_service_account(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    accounts = sdk(raw, admin_api_key=ADMIN).admin.organization.projects.service_accounts
    account = await accounts.create(alpha.project_id, name="bare", create_service_account_only=True)

    made = await accounts.api_keys.create(account.id, project_id=alpha.project_id, name="extra")

    assert (account.role, account.api_key) == ("none", None)
    assert made.value.startswith("sk-proj-")
    assert made.name == "extra"
    assert (await sdk(raw, made.value).models.list()).data is not None


async def test_unknown_objects_of_the_admin_api_are_404(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects

    with pytest.raises(openai.NotFoundError):
        await projects.retrieve("proj_missing")
    with pytest.raises(openai.NotFoundError):  # a key of another project
        await projects.api_keys.retrieve(alpha.key_id, project_id=beta.project_id)
    with pytest.raises(openai.NotFoundError):
        await projects.api_keys.delete(alpha.key_id, project_id=beta.project_id)
    assert (await alpha.client.models.list()).data is not None


async def test_keys_are_stored_as_keyed_hashes(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    database = await Database.connect(keyed.database.url, instance_id="inst_inspect")
    try:
        rows = await database.runner.read(
            lambda conn: conn.execute(sa.select(schema.api_keys)).mappings().all()
        )
    finally:
        await database.aclose()

    stored = " ".join(str(v) for row in rows for v in row.values())
    assert alpha.key not in stored
    assert hashlib.sha256(alpha.key.encode()).hexdigest() not in stored
    assert len(rows) == 1


# --- isolation -------------------------------------------------------------------------------


@dataclass
class Owned:
    """What one project made, by the name of the path parameter that names it."""

    ids: dict[str, str]


async def make_everything(tenant: Tenant, backend: FakeBackend) -> Owned:
    client = tenant.client
    created = await client.responses.with_raw_response.create(model=backend.model, input="Hi")
    response = created.parse()
    conversation = await client.conversations.create(
        items=[{"type": "message", "role": "user", "content": "hello"}]
    )
    items = await client.conversations.items.list(conversation.id)
    uploaded = await client.files.create(
        file=("notes.txt", b"the kettle boils at 100 degrees"), purpose="user_data"
    )
    store = await client.vector_stores.create(name="notes", file_ids=[uploaded.id])
    batch = await client.vector_stores.file_batches.create(store.id, file_ids=[uploaded.id])
    container = await client.containers.create(name="box", file_ids=[uploaded.id])
    container_files = await client.containers.files.list(container.id)
    prompt = await client.post("/prompts", cast_to=httpx2.Response, body={"prompt": "Be {{x}}."})
    hook = await client.webhooks.create(
        name="hooks", url="https://10.9.9.9/hook", event_types=["response.completed"]
    )
    agent = await _json(
        client,
        "/managed-agents",
        {"name": "a", "agent_type": "simple", "config": {"model": backend.model}},
    )
    await _json(client, f"/managed-agents/{agent['id']}/messages", {"content": "hello"})
    run = await _json(client, f"/managed-agents/{agent['id']}/run", {})
    task = await _json(client, f"/managed-agents/{agent['id']}/tasks", {"description": "do it"})
    request = {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/responses",
        "body": {"model": backend.model, "input": "Hi", "store": False},
    }
    batch_input = await client.files.create(
        file=("batch.jsonl", json.dumps(request).encode()), purpose="batch"
    )
    api_batch = await client.batches.create(
        input_file_id=batch_input.id, endpoint="/v1/responses", completion_window="24h"
    )
    return Owned(
        {
            "response_id": response.id,
            "conversation_id": conversation.id,
            "item_id": items.data[0].id,
            "file_id": uploaded.id,
            "vector_store_id": store.id,
            "batch_id": batch.id,
            "container_id": container.id,
            "container_file_id": container_files.data[0].id,
            "prompt_id": prompt.json()["id"],
            "webhook_endpoint_id": hook.id,
            "managed_agent_id": agent["id"],
            "run_id": run["id"],
            "task_id": task["id"],
            "api_batch_id": api_batch.id,  # the Batch API's (batch_id: a vector store's)
            "request_id": created.headers["x-request-id"],  # its row in the request log
        }
    )


async def _json(client: openai.AsyncOpenAI, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await client.post(path, cast_to=httpx2.Response, body=body)
    made: dict[str, Any] = reply.json()
    return made


_BODIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions/{completion_id}": {"metadata": {"k": "v"}},
    "/v1/containers/{container_id}/files": {"file_id": "{file_id}"},
    "/v1/conversations/{conversation_id}": {"metadata": {"k": "v"}},
    "/v1/conversations/{conversation_id}/items": {
        "items": [{"type": "message", "role": "user", "content": "hi"}]
    },
    "/v1/prompts/{prompt_id}": {"prompt": "v2", "version": 1},
    "/v1/prompts/{prompt_id}/set-default-version": {"version": 1},
    "/v1/vector_stores/{vector_store_id}": {"name": "renamed"},
    "/v1/vector_stores/{vector_store_id}/search": {"query": "kettle"},
    "/v1/vector_stores/{vector_store_id}/files": {"file_id": "{file_id}"},
    "/v1/vector_stores/{vector_store_id}/files/{file_id}": {"attributes": {"k": "v"}},
    "/v1/vector_stores/{vector_store_id}/file_batches": {"file_ids": ["{file_id}"]},
    "/v1/webhook_endpoints/{webhook_endpoint_id}/test": {"event_type": "response.completed"},
    "/v1/managed-agents/{managed_agent_id}": {"name": "renamed"},
    "/v1/managed-agents/{managed_agent_id}/messages": {"content": "hi", "stream": True},
    "/v1/managed-agents/{managed_agent_id}/tasks": {"description": "another"},
    "/v1/managed-agents/{managed_agent_id}/tasks/{task_id}": {"status": "done"},
}
_UNOWNED = {"model_id", "shield_id", "asset"}  # asset: the console's files, no project's


def _filled(path: str, ids: dict[str, str]) -> str:
    """The route's path with another project's ids in it (``file_id`` under a container is the
    container's file)."""
    names = dict(ids)
    if path.startswith("/v1/containers/"):
        names["file_id"] = ids["container_file_id"]
    if path.startswith("/v1/batches/"):
        names["batch_id"] = ids["api_batch_id"]
    for name, value in names.items():
        path = path.replace("{" + name + "}", value)
    return path.removeprefix("/v1")


def _body(path: str, ids: dict[str, str]) -> Any:
    body = _BODIES.get(path)
    if body is None:
        return None
    return json.loads(json.dumps(body).replace("{file_id}", ids["file_id"]))


async def test_every_route_answers_404_for_another_projects_ids(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    owned = await make_everything(alpha, backend)
    routes = [
        r
        for r in create_app(keyed).routes
        if isinstance(r, Route)
        and "{" in r.path
        and not r.path.startswith(("/v1/organization/", "/v1/projects/"))  # the admin key's
    ]
    walked: list[str] = []

    for method in ("GET", "POST", "DELETE"):  # deletes last: nothing of alpha's may go
        for route in routes:
            params = set(route.param_convertors)
            if method not in (route.methods or set()) or params & _UNOWNED:
                continue
            path = _filled(route.path, owned.ids)
            reply = await raw.request(
                method, path, headers=beta.headers, json=_body(route.path, owned.ids)
            )
            assert reply.status_code == 404, f"{method} {route.path}: {reply.text}"
            walked.append(f"{method} {route.path}")

    assert len(walked) >= 30
    # alpha still has everything
    await alpha.client.responses.retrieve(owned.ids["response_id"])
    await alpha.client.conversations.items.retrieve(
        owned.ids["item_id"], conversation_id=owned.ids["conversation_id"]
    )
    await alpha.client.files.retrieve(owned.ids["file_id"])
    await alpha.client.vector_stores.retrieve(owned.ids["vector_store_id"])
    await alpha.client.containers.retrieve(owned.ids["container_id"])
    await alpha.client.webhooks.retrieve(owned.ids["webhook_endpoint_id"])
    await alpha.client.batches.retrieve(owned.ids["api_batch_id"])
    agent = f"/managed-agents/{owned.ids['managed_agent_id']}"
    for path in (
        agent,
        f"{agent}/runs/{owned.ids['run_id']}",
        f"{agent}/tasks/{owned.ids['task_id']}",
    ):
        assert (await raw.get(path, headers=alpha.headers)).status_code == 200, path


async def test_lists_show_only_the_callers_project(
    alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    await make_everything(alpha, backend)
    mine = await make_everything(beta, backend)

    files = await beta.client.files.list(purpose="user_data")
    assert [f.id for f in files.data] == [mine.ids["file_id"]]
    assert [b.id for b in (await beta.client.batches.list()).data] == [mine.ids["api_batch_id"]]
    assert [v.id for v in (await beta.client.vector_stores.list()).data] == [
        mine.ids["vector_store_id"]
    ]
    assert [c.id for c in (await beta.client.containers.list()).data] == [mine.ids["container_id"]]
    listed = await beta.client.get("/responses", cast_to=httpx2.Response)
    assert [r["id"] for r in listed.json()["data"]] == [mine.ids["response_id"]]
    prompts = await beta.client.get("/prompts", cast_to=httpx2.Response)
    assert [p["id"] for p in prompts.json()["data"]] == [mine.ids["prompt_id"]]
    hooks = await beta.client.webhooks.list()
    assert [h.id for h in hooks.data] == [mine.ids["webhook_endpoint_id"]]
    agents = await beta.client.get("/managed-agents", cast_to=httpx2.Response)
    assert [a["id"] for a in agents.json()["data"]] == [mine.ids["managed_agent_id"]]


def references(
    viewer: Tenant, model: str, theirs: dict[str, str]
) -> dict[str, Coroutine[Any, Any, object]]:
    """Every way a request of ``viewer`` names another's objects (the ids of ``theirs``), by
    name: each must be a 404 when the objects are not the viewer's to read."""
    create = viewer.client.responses.create
    return {
        "previous_response_id": create(
            model=model, input="Hi", previous_response_id=theirs["response_id"]
        ),
        "conversation": create(model=model, input="Hi", conversation=theirs["conversation_id"]),
        "item_reference": create(
            model=model, input=[{"type": "item_reference", "id": theirs["item_id"]}]
        ),
        "input_file": create(
            model=model,
            input=[
                {"role": "user", "content": [{"type": "input_file", "file_id": theirs["file_id"]}]}
            ],
        ),
        "file_search": create(
            model=model,
            input="Hi",
            tools=[{"type": "file_search", "vector_store_ids": [theirs["vector_store_id"]]}],
        ),
        "prompt": create(model=model, prompt={"id": theirs["prompt_id"]}),
        "vector store file": viewer.client.vector_stores.create(file_ids=[theirs["file_id"]]),
        "container file": viewer.client.containers.create(name="c", file_ids=[theirs["file_id"]]),
    }


async def test_references_to_another_projects_objects_are_404(
    alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    theirs = (await make_everything(alpha, backend)).ids
    attempts = references(beta, backend.model, theirs)

    for name, attempt in attempts.items():
        with pytest.raises(openai.NotFoundError):
            await attempt
        assert name


async def test_sealed_content_does_not_open_in_another_project(
    alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    first = await alpha.client.responses.create(model=backend.model, input="Hi", store=False)
    compacted = await alpha.client.responses.compact(
        model=backend.model, input=[{"role": "user", "content": "remember the kettle"}]
    )
    sealed = [item for item in compacted.output if item.type == "compaction"]
    assert first.id
    assert sealed

    with pytest.raises(openai.BadRequestError):
        await beta.client.responses.create(
            model=backend.model, input=[sealed[0].model_dump(exclude_none=True)]
        )


# --- several processes on one database -------------------------------------------------------


async def test_a_revocation_reaches_another_server_on_the_same_database(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    async with audited_client(keyed) as other:
        elsewhere = sdk(other, alpha.key)
        assert (await elsewhere.models.list()).data is not None  # now cached there

        admin = sdk(raw, admin_api_key=ADMIN).admin.organization.projects
        await admin.api_keys.delete(alpha.key_id, project_id=alpha.project_id)

        for _ in range(100):  # the watch interval is 0.05 s
            try:
                await elsewhere.models.list()
            except openai.AuthenticationError:
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the other server still accepts the revoked key after 2 s")


# --- permissions -----------------------------------------------------------------------------


async def test_model_permissions_limit_what_a_project_sees_and_uses(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects
    assert (await projects.model_permissions.retrieve(alpha.project_id)).api_model_ids == []

    denied = await projects.model_permissions.update(
        alpha.project_id, mode="deny_list", model_ids=[backend.model]
    )

    assert (denied.mode, denied.api_model_ids) == ("deny_list", [backend.model])
    left = [m.id for m in (await alpha.client.models.list()).data]
    assert left == [FAKE_EMBEDDING_MODEL, "all-MiniLM-L6-v2"]  # the embedding models only
    with pytest.raises(openai.NotFoundError) as refused:
        await alpha.client.responses.create(model=backend.model, input="Hi")
    assert refused.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        await alpha.client.models.retrieve(backend.model)
    assert [m.id for m in (await beta.client.models.list()).data] != []  # beta is untouched

    await projects.model_permissions.update(
        alpha.project_id, mode="allow_list", model_ids=[backend.model]
    )
    assert (await alpha.client.responses.create(model=backend.model, input="Hi")).id
    cleared = await projects.model_permissions.delete(alpha.project_id)
    assert cleared.deleted


async def test_a_project_may_be_denied_hosted_tools(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    projects = sdk(raw, admin_api_key=ADMIN).admin.organization.projects

    updated = await projects.hosted_tool_permissions.update(
        alpha.project_id, web_search={"enabled": False}, mcp={"enabled": False}
    )

    assert (updated.web_search.enabled, updated.mcp.enabled) == (False, False)
    assert updated.file_search.enabled
    assert updated.code_interpreter.enabled
    for tool in ({"type": "web_search"}, {"type": "web_search_preview"}):
        with pytest.raises(openai.PermissionDeniedError) as refused:
            await alpha.client.responses.create(model=backend.model, input="Hi", tools=[tool])
        assert refused.value.code == "tool_not_permitted"
    mcp = {"type": "mcp", "server_label": "x", "server_url": "https://mcp.example.com/mcp"}
    with pytest.raises(openai.PermissionDeniedError):
        await alpha.client.responses.create(model=backend.model, input="Hi", tools=[mcp])
    again = await projects.hosted_tool_permissions.update(
        alpha.project_id, web_search={"enabled": True}
    )
    assert again.web_search.enabled
    assert not again.mcp.enabled


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
async def test_postgresql_pushes_a_revocation_to_the_other_server(
    keyed: Settings, alpha: Tenant, raw: httpx2.AsyncClient
) -> None:
    """(SQLite has no notifications: its processes poll the epoch, tested above.)"""
    slow = keyed.auth.model_copy(update={"watch_interval": 60.0})
    async with audited_client(keyed.model_copy(update={"auth": slow})) as other:
        elsewhere = sdk(other, alpha.key)
        assert (await elsewhere.models.list()).data is not None
        await sdk(raw, admin_api_key=ADMIN).admin.organization.projects.api_keys.delete(
            alpha.key_id, project_id=alpha.project_id
        )
        for _ in range(100):
            try:
                await elsewhere.models.list()
            except openai.AuthenticationError:
                return
            await asyncio.sleep(0.02)
    pytest.fail("the revocation did not reach the other server in 2 s (watching every 60 s)")


async def test_unknown_key_scopes_are_refused_not_ignored(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    """(What known scopes do: tests/server/test_people.py.)"""
    accounts = sdk(raw, admin_api_key=ADMIN).admin.organization.projects.service_accounts
    account = await accounts.create(alpha.project_id, name="bare", create_service_account_only=True)

    with pytest.raises(openai.BadRequestError) as refused:
        await accounts.api_keys.create(
            account.id, project_id=alpha.project_id, scopes=["api.all.read", "api.everything"]
        )

    assert refused.value.param == "scopes"
    assert "api.everything" in refused.value.message


async def test_a_keys_lifetime_is_updated_and_logged(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    keys = sdk(raw, admin_api_key=ADMIN).admin.organization.projects.api_keys

    updated = await keys.update(alpha.key_id, project_id=alpha.project_id, expires_in_seconds=600)
    unchanged = await keys.update(alpha.key_id, project_id=alpha.project_id)
    logged = sdk(raw, admin_api_key=ADMIN).admin.organization.audit_logs.list(
        event_types=["api_key.updated"]
    )

    assert updated.expires_at is not None
    assert 590 <= updated.expires_at - time.time() <= 610
    assert unchanged.expires_at == updated.expires_at
    assert [e.type async for e in logged] == ["api_key.updated"]
    assert (await alpha.client.models.list()).data is not None
    with pytest.raises(openai.NotFoundError):
        await keys.update("key_missing", project_id=alpha.project_id, expires_in_seconds=600)


async def test_more_admin_keys_through_the_admin_api(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    keys = sdk(raw, admin_api_key=ADMIN).admin.organization.admin_api_keys

    made = await keys.create(name="second admin")
    second = sdk(raw, admin_api_key=made.value).admin.organization
    listed = [k async for k in keys.list()]
    again = await keys.retrieve(made.id)
    after = await keys.list(after=made.id)
    projects = [p.id async for p in second.projects.list()]
    first = (await second.projects.list(limit=1)).data[0]
    rest = [p.id async for p in second.projects.list(after=first.id)]
    in_project = sdk(raw, made.value, project=alpha.project_id)
    answered = await in_project.responses.create(model=backend.model, input="Hi")
    gone = await keys.delete(made.id)

    assert made.value.startswith("sk-admin-")
    assert [k.id for k in listed] == [made.id]
    assert made.value not in {k.redacted_value for k in listed}
    assert again.id == made.id
    assert after.data == []
    assert alpha.project_id in projects
    assert rest == projects[1:]
    assert answered.id
    assert gone.deleted
    with pytest.raises(openai.AuthenticationError):
        await second.projects.list()
    logs = sdk(raw, admin_api_key=ADMIN).admin.organization.audit_logs
    kinds = ["tenant.admin_api_key.created", "tenant.admin_api_key.deleted"]
    logged = [e.type async for e in logs.list(event_types=kinds)]  # type: ignore[arg-type]
    assert logged == ["tenant.admin_api_key.deleted", "tenant.admin_api_key.created"]
    assert {e.type async for e in logs.list()} >= set(kinds)
    newest = (await logs.list(event_types=kinds, limit=1)).data[0]  # type: ignore[arg-type]
    older = await logs.list(event_types=kinds, after=newest.id)  # type: ignore[arg-type]
    assert [e.type for e in older.data] == ["tenant.admin_api_key.created"]
    with pytest.raises(openai.PermissionDeniedError):
        await sdk(raw, admin_api_key=alpha.key).admin.organization.admin_api_keys.list()
