"""Rate limits per project and model (shared by every server on a database), usage records and
their reports, and the audit log, through the official client's admin resources."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx2
import openai
import pytest

from agentloom.config import RetentionSettings, Settings
from agentloom.inference.scripted import ScriptedModel, delay, text
from agentloom.services.jobs.retention import RetentionSweep
from agentloom.storage.database import Database
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL, audited_client
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

T = TypeVar("T")


@pytest.fixture
def quick_usage(keyed: Settings) -> Settings:
    server = keyed.server.model_copy(update={"usage_flush_interval": 0.05})
    return keyed.model_copy(update={"server": server})


def projects(raw: httpx2.AsyncClient) -> Any:
    return sdk(raw, admin_api_key=ADMIN).admin.organization.projects


async def limit(raw: httpx2.AsyncClient, tenant: Tenant, model: str, **limits: int) -> Any:
    """Set the tenant's limits, early enough in a minute that the test ends in the same one
    (the windows are fixed minutes)."""
    into_minute = time.time() % 60
    if into_minute > 45:
        await asyncio.sleep(60.5 - into_minute)
    return await projects(raw).rate_limits.update_rate_limit(
        "rl-" + model.replace("/", "__"), project_id=tenant.project_id, **limits
    )


async def eventually(check: Callable[[], Awaitable[T]], ok: Callable[[T], bool]) -> T:
    for _ in range(100):
        value = await check()
        if ok(value):
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"never held; last: {value!r}")


# --- rate limits -----------------------------------------------------------------------------


async def test_a_request_limit_answers_429_with_openais_headers(
    raw: httpx2.AsyncClient, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    updated = await limit(raw, alpha, backend.model, max_requests_per_1_minute=2)
    body = {"model": backend.model, "input": "Hi"}

    first = await raw.post("/responses", json=body, headers=alpha.headers)
    second = await raw.post("/responses", json=body, headers=alpha.headers)
    third = await raw.post("/responses", json=body, headers=alpha.headers)
    other = await raw.post("/responses", json=body, headers=beta.headers)

    assert (updated.model, updated.max_requests_per_1_minute) == (backend.model, 2)
    assert [r.status_code for r in (first, second, third, other)] == [200, 200, 429, 200]
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert first.headers["x-ratelimit-remaining-requests"] == "1"
    assert second.headers["x-ratelimit-remaining-requests"] == "0"
    assert first.headers["x-ratelimit-reset-requests"].endswith("s")
    error = third.json()["error"]
    assert (error["type"], error["code"]) == ("requests", "rate_limit_exceeded")
    assert "Please try again in" in error["message"]
    assert 1 <= int(third.headers["retry-after"]) <= 60
    assert "x-ratelimit-limit-requests" not in other.headers


async def test_the_sdk_lists_and_updates_rate_limits(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    before = [r async for r in projects(raw).rate_limits.list_rate_limits(alpha.project_id)]
    await limit(raw, alpha, backend.model, max_requests_per_1_day=5, max_tokens_per_1_minute=900)
    after = [r async for r in projects(raw).rate_limits.list_rate_limits(alpha.project_id)]

    served = sorted([backend.model, FAKE_EMBEDDING_MODEL, "all-MiniLM-L6-v2"])  # and embeddings
    assert [(r.model, r.max_requests_per_1_minute) for r in before] == [(m, 0) for m in served]
    changed = next(r for r in after if r.model == backend.model)
    assert (changed.max_requests_per_1_day, changed.max_tokens_per_1_minute) == (5, 900)
    with pytest.raises(openai.NotFoundError):
        await limit(raw, alpha, "no-such-model", max_requests_per_1_minute=1)


@pytest.mark.parametrize(
    "field", ["max_requests_per_1_minute", "max_tokens_per_1_minute", "max_requests_per_1_day"]
)
async def test_a_limit_past_its_32_bit_column_is_a_400_naming_it(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend, field: str
) -> None:
    update = projects(raw).rate_limits.update_rate_limit
    limit_id = f"rl-{backend.model}"

    # found by Schemathesis: PostgreSQL's integer column refused it, a 500
    with pytest.raises(openai.BadRequestError) as refused:
        await update(limit_id, project_id=alpha.project_id, **{field: 36028797018963967})
    largest = await update(limit_id, project_id=alpha.project_id, **{field: 2**31 - 1})

    error: Any = refused.value.body
    assert (error["type"], error["param"]) == ("invalid_request_error", field)
    assert "less than or equal to 2147483647" in error["message"]
    assert getattr(largest, field) == 2**31 - 1
    listed = [r async for r in projects(raw).rate_limits.list_rate_limits(alpha.project_id)]
    assert getattr(next(r for r in listed if r.model == backend.model), field) == 2**31 - 1


async def test_a_token_limit_stops_requests_once_spent(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    await limit(raw, alpha, backend.model, max_tokens_per_1_minute=1)

    spent = await alpha.client.responses.create(model=backend.model, input="Hi there")
    with pytest.raises(openai.RateLimitError) as refused:
        await alpha.client.responses.create(model=backend.model, input="Hi")

    assert spent.usage is not None
    assert spent.usage.total_tokens > 1
    assert refused.value.body["type"] == "tokens"  # type: ignore[index]


async def test_a_limit_is_shared_by_every_server_on_the_database(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    await limit(raw, alpha, backend.model, max_requests_per_1_minute=3)
    body = {"model": backend.model, "input": "Hi"}
    async with audited_client(keyed) as other:
        statuses = [
            (await client.post("/responses", json=body, headers=alpha.headers)).status_code
            for client in (raw, other, raw, other)
        ]

    assert statuses == [200, 200, 200, 429]


# --- usage -----------------------------------------------------------------------------------


async def test_usage_is_recorded_per_project_key_and_model(
    quick_usage: Settings, backend: FakeBackend
) -> None:
    start = int(time.time()) // 86_400 * 86_400
    async with audited_client(quick_usage) as raw:
        first, second = await new_tenant(raw, "alpha"), await new_tenant(raw, "beta")
        for _ in range(2):
            await first.client.responses.create(model=backend.model, input="Hello there")
        await second.client.responses.create(model=backend.model, input="Hi")
        usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage

        def by_project() -> Awaitable[Any]:
            return usage.completions(start_time=start, group_by=["project_id"], limit=1)

        page = await eventually(by_project, lambda p: len(p.data[0].results) == 2)
        keyed_page = await usage.completions(
            start_time=start, group_by=["api_key_id", "model"], project_ids=[first.project_id]
        )
        minutes = await usage.completions(start_time=int(time.time()) - 120, bucket_width="1m")

    results = {r.project_id: r for r in page.data[0].results}
    assert results[first.project_id].num_model_requests == 2
    assert results[second.project_id].num_model_requests == 1
    assert results[first.project_id].input_tokens > results[second.project_id].input_tokens
    assert results[first.project_id].output_tokens > 0
    assert (page.data[0].start_time, page.data[0].end_time) == (start, start + 86_400)
    today = [b for b in keyed_page.data if b.results]
    assert [(r.api_key_id, r.model) for r in today[0].results] == [(first.key_id, backend.model)]
    assert len(minutes.data) == 3
    assert sum(r.num_model_requests for b in minutes.data for r in b.results) == 3


async def test_tool_usage_reports_and_bad_queries(raw: httpx2.AsyncClient, alpha: Tenant) -> None:
    usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage
    now = int(time.time())

    searches = await usage.file_search_calls(start_time=now - 3600, bucket_width="1h")
    sessions = await usage.code_interpreter_sessions(start_time=now - 60, bucket_width="1m")

    assert searches.data[0].results == []
    assert len(sessions.data) == 2
    with pytest.raises(openai.BadRequestError):
        await usage.completions(start_time=now, bucket_width="1w")  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError):
        await usage.code_interpreter_sessions(start_time=now, group_by=["model"])  # type: ignore[list-item]
    with pytest.raises(openai.PermissionDeniedError):
        await sdk(raw, admin_api_key=alpha.key).admin.organization.usage.completions(start_time=now)


# --- audit log -------------------------------------------------------------------------------


async def test_the_audit_log_names_what_changed_and_who_did_it(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    admin = sdk(raw, admin_api_key=ADMIN).admin.organization
    await admin.projects.api_keys.delete(alpha.key_id, project_id=alpha.project_id)
    await limit(raw, alpha, backend.model, max_requests_per_1_minute=7)

    entries = [e async for e in admin.audit_logs.list(project_ids=[alpha.project_id])]
    revoked = [e async for e in admin.audit_logs.list(event_types=["api_key.deleted"])]

    kinds = [e.type for e in entries]
    assert kinds == [
        "rate_limit.updated",
        "api_key.deleted",
        "api_key.created",
        "service_account.created",
        "project.created",
    ]
    assert all(e.actor and e.actor.api_key and e.actor.api_key.id == "admin" for e in entries)
    assert all(e.project and e.project.id == alpha.project_id for e in entries)
    assert [e.api_key_deleted.id for e in revoked if e.api_key_deleted] == [alpha.key_id]
    assert entries[0].rate_limit_updated is not None


async def test_leases_never_let_through_more_than_the_limit(
    keyed: Settings, raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend
) -> None:
    await limit(raw, alpha, backend.model, max_requests_per_1_minute=40)  # leases of 2
    body = {"model": backend.model, "input": "Hi"}
    async with audited_client(keyed) as other:
        statuses = [
            (await client.post("/responses", json=body, headers=alpha.headers)).status_code
            for _ in range(25)
            for client in (raw, other)
        ]

    admitted = statuses.count(200)
    assert statuses.count(429) == 50 - admitted
    assert 36 <= admitted <= 40  # at most one unused lease of 2 in each server


# --- a project's own response budget ---------------------------------------------------------


async def test_a_projects_response_timeout_ends_its_responses(
    raw: httpx2.AsyncClient, alpha: Tenant, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    budget = await projects(raw).update(
        alpha.project_id, name="alpha", extra_body={"response_timeout": 0.5}
    )
    scripted.add_turn(text("Hel"), delay(20))
    body = {"model": backend.model, "input": "Hi"}
    failed = await raw.post("/responses", json=body, headers=alpha.headers)
    cleared = await projects(raw).update(
        alpha.project_id, name="alpha", extra_body={"response_timeout": None}
    )
    refused = await raw.post(
        f"/organization/projects/{alpha.project_id}",
        json={"name": "alpha", "response_timeout": 0},
        headers={"authorization": f"Bearer {ADMIN}"},
    )

    assert budget.model_dump()["response_timeout"] == 0.5
    assert failed.status_code == 504, failed.text
    assert failed.json()["error"]["message"].startswith(
        "the response did not finish within 0.5 s (the project's response_timeout)"
    )
    assert "response_timeout" not in cleared.model_dump(exclude_none=True)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "response_timeout"


# --- a project's own retention of its responses ----------------------------------------------


async def test_a_projects_response_retention_replaces_the_servers(
    raw: httpx2.AsyncClient, keyed: Settings, alpha: Tenant, beta: Tenant, backend: FakeBackend
) -> None:
    kept = await projects(raw).update(
        alpha.project_id, name="alpha", extra_body={"response_retention": 1.0}
    )
    made = {
        tenant.project_id: await tenant.client.responses.create(model=backend.model, input="Hi")
        for tenant in (alpha, beta)
    }
    database = await Database.connect(keyed.database.url, instance_id="inst_sweeper")
    try:  # the sweep a job runner runs, two seconds on: alpha's age is past, the server's 0 not
        await RetentionSweep(database.retention, RetentionSettings()).sweep(time.time() + 2)
    finally:
        await database.aclose()
    gone = await raw.get(f"/responses/{made[alpha.project_id].id}", headers=alpha.headers)
    still = await beta.client.responses.retrieve(made[beta.project_id].id)
    cleared = await projects(raw).update(
        alpha.project_id, name="alpha", extra_body={"response_retention": None}
    )
    refused = await raw.post(
        f"/organization/projects/{alpha.project_id}",
        json={"name": "alpha", "response_retention": -1},
        headers={"authorization": f"Bearer {ADMIN}"},
    )

    assert kept.model_dump()["response_retention"] == 1.0
    assert gone.status_code == 404, gone.text
    assert still.id == made[beta.project_id].id
    assert "response_retention" not in cleared.model_dump(exclude_none=True)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "response_retention"
