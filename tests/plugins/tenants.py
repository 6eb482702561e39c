"""Tenancy fixtures: the app with API keys on, and projects with a key each.

``keyed`` is the server's settings with ``[auth] mode = "keys"`` and the admin key ``ADMIN``;
``raw`` a raw client on that app (everything it sends checked against OpenAI's types);
``alpha`` and ``beta`` two projects made through the admin API, each with its key and an
``openai`` client using it.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
import pytest

from agentloom.config import AuthSettings, Settings
from tests.plugins.server import BASE_URL, audited_client

ADMIN_ENV = "AGENTLOOM_TEST_ADMIN_KEY"
ADMIN = "sk-admin-" + secrets.token_urlsafe(24)


@pytest.fixture
def keyed(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv(ADMIN_ENV, ADMIN)
    auth = AuthSettings(mode="keys", admin_key_env=ADMIN_ENV, watch_interval=0.05)
    return settings.model_copy(update={"auth": auth})


@pytest.fixture
async def raw(keyed: Settings) -> AsyncIterator[httpx2.AsyncClient]:
    async with audited_client(keyed) as client:
        yield client


def sdk(raw: httpx2.AsyncClient, key: str = "none", **options: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=BASE_URL, api_key=key, http_client=raw, max_retries=0, **options
    )


@dataclass
class Tenant:
    project_id: str
    key: str
    key_id: str
    client: openai.AsyncOpenAI

    @property
    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.key}"}


async def new_tenant(raw: httpx2.AsyncClient, name: str) -> Tenant:
    admin = sdk(raw, admin_api_key=ADMIN).admin.organization.projects
    project = await admin.create(name=name)
    account = await admin.service_accounts.create(project.id, name="ci")
    assert account.api_key is not None
    key = account.api_key
    return Tenant(project.id, key.value, key.id, sdk(raw, key.value))


@pytest.fixture
async def alpha(raw: httpx2.AsyncClient) -> Tenant:
    return await new_tenant(raw, "alpha")


@pytest.fixture
async def beta(raw: httpx2.AsyncClient) -> Tenant:
    return await new_tenant(raw, "beta")
