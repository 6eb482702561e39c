"""Two ``agentloom serve`` processes with API keys on one database: access rules set through one
hide a user's objects from another user on the other, every route with an id walked there (a
404 each, lists empty), while their owner still finds every one there."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import Settings
from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, agentloom_serve
from tests.e2e.test_tenancy_processes import ADMIN, _keyed_env
from tests.plugins.tenants import Tenant
from tests.server.test_access_rules import PRIVATE, _listed, make_all, walk

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

_ADMIN = {"authorization": f"Bearer {ADMIN}"}


async def _person(admin: httpx2.AsyncClient, base_url: str, project: str, email: str) -> Any:
    invite = await admin.post(
        "/organization/invites",
        json={"email": email, "role": "reader", "projects": [{"id": project, "role": "member"}]},
    )
    user = (await admin.post(f"/organization/invites/{invite.json()['id']}/accept", json={})).json()
    made = await admin.post(
        f"/organization/projects/{project}/users/{user['id']}/api_keys", json={}
    )
    key = made.json()
    client = openai.AsyncOpenAI(base_url=base_url, api_key=key["value"], max_retries=0)
    return user["id"], Tenant(project, key["value"], key["id"], client)


async def _rules(admin: httpx2.AsyncClient, project: str, rules: list[Any]) -> None:
    reply = await admin.post(
        f"/organization/projects/{project}", json={"name": "p", "access_rules": rules}
    )
    assert reply.status_code == 200, reply.text


async def _until_404(http: httpx2.AsyncClient, path: str, viewer: Tenant) -> None:
    deadline = time.monotonic() + WAIT
    while (await http.get(path, headers=viewer.headers)).status_code != 404:
        assert time.monotonic() < deadline, f"{path} still shown on the other process"
        await asyncio.sleep(0.05)


async def test_access_rules_set_through_one_process_hold_in_the_other(
    keyed: Settings, backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    env = _keyed_env(database_url, backend)
    with (
        agentloom_serve(env, tmp_path / "one.log") as one,
        agentloom_serve(env, tmp_path / "two.log") as two,
    ):
        async with (
            httpx2.AsyncClient(base_url=one.base_url, timeout=WAIT, headers=_ADMIN) as admin,
            httpx2.AsyncClient(base_url=two.base_url, timeout=WAIT) as second,
        ):
            project = (await admin.post("/organization/projects", json={"name": "p"})).json()["id"]
            _, ada = await _person(admin, one.base_url, project, "ada@example.com")
            _, carol = await _person(admin, two.base_url, project, "carol@example.com")
            async with ada.client, carol.client:
                ids = await make_all(ada, backend)
                response = f"/responses/{ids['response_id']}"
                assert (await second.get(response, headers=carol.headers)).status_code == 200

                await _rules(admin, project, PRIVATE)
                await _until_404(second, response, carol)
                refused = await walk(second, keyed, carol, ids, "GET")
                carol_sees = await _listed(carol)
                owners = await walk(second, keyed, ada, ids, "GET")

    leaked = [f"{name}: {status}" for name, status in refused.items() if status != 404]
    assert not leaked, "\n".join(leaked)
    assert len(refused) >= 20
    assert not any(carol_sees.values()), carol_sees
    missing = [f"{name}: {status}" for name, status in owners.items() if status == 404]
    assert not missing, "\n".join(missing)
