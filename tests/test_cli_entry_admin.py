"""``agentloom projects`` / ``keys`` through the installed entry point against an agentloom
server in keys mode over a socket: the Admin API with the admin key, and what is said without
it."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentloom.config import AuthSettings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.cli_support import run_cli
from tests.plugins.server import make_settings

ADMIN_ENV = "AGENTLOOM_TEST_CLI_ADMIN_KEY"
ADMIN = "sk-admin-" + secrets.token_urlsafe(24)


@pytest.fixture
def url(backend: FakeBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    settings = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}")
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV, watch_interval=0.05)
    with serve(create_app(settings.model_copy(update={"auth": auth}))) as served:
        yield served


def admin(url: str, *args: str, key: str | None = ADMIN) -> tuple[int, str, str]:
    env = {"AGENTLOOM_BASE_URL": url} | ({"AGENTLOOM_ADMIN_KEY": key} if key else {})
    done = run_cli(*args, env=env)
    return done.returncode, done.stdout, done.stderr


def test_without_the_admin_key_it_says_how_to_get_in(url: str) -> None:
    code, out, err = admin(url, "projects", "list", key=None)

    assert (code, out) == (1, "")
    assert "(401 invalid_api_key)" in err
    assert "set AGENTLOOM_ADMIN_KEY" in err
    assert "agentloom keys create --project default --database URL" in err
    assert len(err.splitlines()) == 1


def test_keys_through_the_admin_api(url: str, backend: FakeBackend) -> None:
    code, out, err = admin(url, "keys", "create", "--project", "default", "--name", "ci")
    assert code == 0, err
    key = out.strip()
    assert key.startswith("sk-proj-")
    served = run_cli("models", "--json", "--base-url", url, "--api-key", key)
    assert backend.model in [model["id"] for model in json.loads(served.stdout)]

    code, out, err = admin(url, "keys", "list", "--json")
    assert code == 0, err
    (listed,) = json.loads(out)
    assert key not in out
    assert listed["redacted_value"][:11] == key[:11]
    code, out, err = admin(url, "projects", "create", "search team")
    assert code == 0, err
    assert out.startswith("proj_")

    assert admin(url, "keys", "revoke", listed["id"])[:2] == (0, f"revoked {listed['id']}\n")
    refused = run_cli("models", "--base-url", url, "--api-key", key)
    assert refused.returncode == 1
    assert "(401 invalid_api_key)" in refused.stderr
