"""Two ``agentloom serve`` processes with API keys on one database: a key made through one works
on the other, its revocation reaches the other, and a rate limit counts requests on both."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import httpx2
import pytest

from agentloom.testing.backend import FakeBackend
from tests.e2e.test_restart import WAIT, _env, agentloom_serve

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

ADMIN = "sk-admin-" + secrets.token_urlsafe(24)


def _keyed_env(database_url: str, backend: FakeBackend) -> dict[str, str]:
    return {
        **_env(database_url, backend),
        "AGENTLOOM_AUTH": "keys",
        "AGENTLOOM_ADMIN_KEY": ADMIN,
    }


def test_keys_revocation_and_limits_hold_across_server_processes(
    backend: FakeBackend, database_url: str, tmp_path: Path
) -> None:
    env = _keyed_env(database_url, backend)
    admin = {"authorization": f"Bearer {ADMIN}"}
    body = {"model": backend.model, "input": "Hi"}
    with (
        agentloom_serve(env, tmp_path / "one.log") as one,
        agentloom_serve(env, tmp_path / "two.log") as two,
        httpx2.Client(base_url=one.base_url, timeout=WAIT) as first,
        httpx2.Client(base_url=two.base_url, timeout=WAIT) as second,
    ):
        project = first.post("/organization/projects", json={"name": "p"}, headers=admin).json()
        path = f"/organization/projects/{project['id']}"
        account = first.post(f"{path}/service_accounts", json={"name": "ci"}, headers=admin)
        key = account.json()["api_key"]
        mine = {"authorization": f"Bearer {key['value']}"}
        limit = {"max_requests_per_1_minute": 3}
        first.post(f"{path}/rate_limits/rl-{backend.model}", json=limit, headers=admin)
        time.sleep(1.0)  # both processes see the new limit (the watch interval is 0.5 s)

        statuses = [
            client.post("/responses", json=body, headers=mine).status_code
            for client in (first, second, second, first)
        ]
        first.delete(f"{path}/api_keys/{key['id']}", headers=admin)
        deadline = time.monotonic() + WAIT
        while second.get("/models", headers=mine).status_code == 200:
            assert time.monotonic() < deadline, "the other process still takes the revoked key"
            time.sleep(0.05)

    assert statuses == [200, 200, 200, 429]
