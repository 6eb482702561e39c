"""Two ``agentloom serve`` processes with API keys on one database: a key restricted through one
is refused by the other what it no longer grants, and a user removed from a project through one
finds their key refused by the other."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest

from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, agentloom_serve
from tests.e2e.test_tenancy_processes import ADMIN, _keyed_env

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

_ADMIN = {"authorization": f"Bearer {ADMIN}"}


def _until(status: int, ask: Callable[[], httpx2.Response], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while ask().status_code != status:
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_scopes_and_people_changed_through_one_process_hold_in_the_other(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    env = _keyed_env(database_url, backend)
    with (
        agentloom_serve(env, tmp_path / "one.log") as one,
        agentloom_serve(env, tmp_path / "two.log") as two,
        httpx2.Client(base_url=one.base_url, timeout=WAIT, headers=_ADMIN) as first,
        httpx2.Client(base_url=two.base_url, timeout=WAIT) as second,
    ):
        project = first.post("/organization/projects", json={"name": "p"}).json()["id"]
        path = f"/organization/projects/{project}"
        key = first.post(f"{path}/service_accounts", json={"name": "ci"}).json()["api_key"]
        invite = first.post(
            "/organization/invites",
            json={
                "email": "ada@example.com",
                "role": "reader",
                "projects": [{"id": project, "role": "member"}],
            },
        ).json()
        ada = first.post(f"/organization/invites/{invite['id']}/accept", json={}).json()["id"]
        users_key = first.post(f"{path}/users/{ada}/api_keys", json={}).json()["value"]
        as_account = {"authorization": f"Bearer {key['value']}"}
        as_ada = {"authorization": f"Bearer {users_key}"}
        assert second.get("/files", headers=as_account).status_code == 200  # cached there
        assert second.get("/files", headers=as_ada).status_code == 200

        first.post(f"{path}/api_keys/{key['id']}", json={"scopes": ["api.model.read"]})
        _until(403, lambda: second.get("/files", headers=as_account), "files still listed")
        first.delete(f"{path}/users/{ada}")
        _until(401, lambda: second.get("/files", headers=as_ada), "the user's key still works")
        models = second.get("/models", headers=as_account)

    assert models.status_code == 200  # what the scopes still grant
