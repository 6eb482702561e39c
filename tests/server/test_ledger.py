"""The gateway's ledger through the official client's admin resources: a request log row for
every request of the traffic, its cost from ``[prices]``, ``/v1/organization/costs`` and the
usage reports, and spend limits and alerts in OpenAI's shapes (issue 40)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx2
import openai
import pytest

from agentloom.config import ModelPriceSettings, Settings
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import FAKE_EMBEDDING_MODEL, audited_client
from tests.plugins.tenants import ADMIN, Tenant, new_tenant, sdk
from tests.plugins.webhooks import WebhookReceiver

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

T = TypeVar("T")
ADMIN_HEADERS = {"authorization": f"Bearer {ADMIN}"}
INPUT, CACHED, OUTPUT, EMBEDDINGS = 1000.0, 100.0, 2000.0, 500.0  # dollars per 1M tokens


@pytest.fixture
def priced(keyed: Settings, backend: FakeBackend) -> Settings:
    """Usage written every 50 ms, and prices high enough that one request costs cents."""
    server = keyed.server.model_copy(update={"usage_flush_interval": 0.05})
    prices = {
        backend.model: ModelPriceSettings(input=INPUT, cached_input=CACHED, output=OUTPUT),
        FAKE_EMBEDDING_MODEL: ModelPriceSettings(embeddings=EMBEDDINGS),
    }
    return keyed.model_copy(update={"server": server, "prices": prices})


async def eventually(check: Callable[[], Awaitable[T]], ok: Callable[[T], bool]) -> T:
    for _ in range(200):
        value = await check()
        if ok(value):
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"never held; last: {value!r}")


async def logged(raw: httpx2.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    reply = await raw.get("/organization/requests", params=params, headers=ADMIN_HEADERS)
    assert reply.status_code == 200, reply.text
    rows: list[dict[str, Any]] = reply.json()["data"]
    return rows


def dollars(input_tokens: int, output_tokens: int, cached: int = 0) -> float:
    fresh = input_tokens - cached
    return (fresh * INPUT + cached * CACHED + output_tokens * OUTPUT) / 1e6


# --- the request log -------------------------------------------------------------------------


async def test_every_endpoint_of_the_traffic_is_logged_with_its_cost(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha = await new_tenant(raw, "alpha")
        client = alpha.client
        answer = await client.responses.with_raw_response.create(
            model=backend.model, input="Hello there", user="ada"
        )
        response = answer.parse()
        stream = await client.chat.completions.create(
            model=backend.model,
            messages=[{"role": "user", "content": "Hi"}],
            stream=True,
            user="bob",
        )
        chunks = [chunk async for chunk in stream]
        embedded = await client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input="some text")
        await client.moderations.create(input="Write to bob@example.com")
        with pytest.raises(openai.NotFoundError):
            await client.responses.create(model="no-such-model", input="Hi")
        await client.models.list()  # not traffic: not logged

        rows = await eventually(lambda: logged(raw), lambda rows: len(rows) == 5)
        by_id = await raw.get(
            f"/organization/requests/{answer.headers['x-request-id']}", headers=ADMIN_HEADERS
        )
        failed = await logged(raw, errors="true")
        chats = await logged(raw, **{"endpoints[]": "chat.completions", "status": "200"})
        missing = await raw.get("/organization/requests/req_nothing", headers=ADMIN_HEADERS)
        as_tenant = await raw.get("/organization/requests", headers=alpha.headers)

    rows.reverse()  # newest first: in the order sent
    assert [r["endpoint"] for r in rows] == [
        "responses",
        "chat.completions",
        "embeddings",
        "moderations",
        "responses",
    ]
    assert {(r["project_id"], r["api_key_id"]) for r in rows} == {(alpha.project_id, alpha.key_id)}
    first = rows[0]
    assert response.usage is not None
    assert by_id.json() == first
    assert first["object"] == "organization.request"
    assert (first["model"], first["deployment"], first["status"]) == (backend.model, "fake", 200)
    assert (first["user"], first["response_id"]) == ("ada", response.id)
    assert first["input_tokens"] == response.usage.input_tokens
    assert first["output_tokens"] == response.usage.output_tokens
    usage = response.usage
    assert first["cost"] == pytest.approx(dollars(usage.input_tokens, usage.output_tokens))
    assert first["latency_ms"] > 0
    assert first["error_code"] is None
    chat = rows[1]
    assert chunks
    assert chat["user"] == "bob"
    assert chat["time_to_first_token_ms"] is not None
    assert chat["time_to_first_token_ms"] <= chat["latency_ms"]
    assert chat["cost"] == pytest.approx(dollars(chat["input_tokens"], chat["output_tokens"]))
    assert rows[2]["input_tokens"] == embedded.usage.prompt_tokens
    assert rows[2]["cost"] == pytest.approx(embedded.usage.prompt_tokens * EMBEDDINGS / 1e6)
    assert (rows[3]["model"], rows[3]["cost"]) == ("rules", 0)  # no price: no cost
    assert (rows[4]["status"], rows[4]["error_code"]) == (404, "model_not_found")
    assert [r["endpoint"] for r in failed] == ["responses"]
    assert [r["id"] for r in chats] == [chat["id"]]
    assert missing.status_code == 404
    assert as_tenant.status_code in (401, 403)  # the admin key's alone


async def test_the_log_pages_and_refuses_bad_filters(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha, beta = await new_tenant(raw, "alpha"), await new_tenant(raw, "beta")
        for tenant in (alpha, beta, alpha):
            await tenant.client.responses.create(model=backend.model, input="Hi")
        await eventually(lambda: logged(raw), lambda rows: len(rows) == 3)
        first = await logged(raw, limit=2)
        rest = await logged(raw, limit=2, after=first[-1]["id"])
        betas = await logged(raw, **{"project_ids[]": beta.project_id})
        old = await logged(raw, created_before=int(time.time()) - 3600)
        bad = await raw.get("/organization/requests?status=ok", headers=ADMIN_HEADERS)
        gone = await raw.get("/organization/requests?after=req_none", headers=ADMIN_HEADERS)

    assert len(first) == 2
    assert len(rest) == 1
    assert [r["project_id"] for r in [*first, *rest]] == [
        alpha.project_id,
        beta.project_id,
        alpha.project_id,
    ]
    assert [r["project_id"] for r in betas] == [beta.project_id]
    assert old == []
    assert (bad.status_code, bad.json()["error"]["param"]) == (400, "status")
    assert gone.status_code == 404


# --- costs and usage -------------------------------------------------------------------------


async def test_costs_are_bucketed_and_grouped_as_openai_does(
    priced: Settings, backend: FakeBackend
) -> None:
    start = int(time.time()) // 86_400 * 86_400
    async with audited_client(priced) as raw:
        alpha, beta = await new_tenant(raw, "alpha"), await new_tenant(raw, "beta")
        one = await alpha.client.responses.create(model=backend.model, input="Hello there")
        two = await beta.client.responses.create(model=backend.model, input="Hi")
        embedded = await alpha.client.embeddings.create(model=FAKE_EMBEDDING_MODEL, input="x y")
        usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage

        def total() -> Awaitable[Any]:
            return usage.costs(start_time=start, limit=1)

        spent = dollars(one.usage.input_tokens, one.usage.output_tokens)  # type: ignore[union-attr]
        theirs = dollars(two.usage.input_tokens, two.usage.output_tokens)  # type: ignore[union-attr]
        embedding = embedded.usage.prompt_tokens * EMBEDDINGS / 1e6
        everything = spent + theirs + embedding
        page = await eventually(
            total,
            lambda p: (
                bool(p.data[0].results)
                and p.data[0].results[0].amount.value == pytest.approx(everything)
            ),
        )
        by_project = await usage.costs(start_time=start, group_by=["project_id"], limit=1)
        by_line = await usage.costs(
            start_time=start, group_by=["line_item"], project_ids=[alpha.project_id], limit=1
        )
        output_only = await usage.costs(
            start_time=start, line_items=[f"{backend.model}, output_tokens"], limit=1
        )
        week = await usage.costs(start_time=start - 6 * 86_400)
        with pytest.raises(openai.BadRequestError):
            await usage.costs(start_time=start, group_by=["user_id"])
        with pytest.raises(openai.BadRequestError):
            await usage.costs(start_time=start, bucket_width="1h")  # type: ignore[arg-type]

    (result,) = page.data[0].results
    assert (result.object, result.amount.currency) == ("organization.costs.result", "usd")
    projects = {r.project_id: r.amount.value for r in by_project.data[0].results}
    assert projects == {
        alpha.project_id: pytest.approx(spent + embedding),
        beta.project_id: pytest.approx(theirs),
    }
    lines = {r.line_item: (r.amount.value, r.quantity) for r in by_line.data[0].results}
    assert one.usage is not None
    assert lines[f"{backend.model}, input_tokens"] == (
        pytest.approx(one.usage.input_tokens * INPUT / 1e6),
        one.usage.input_tokens,
    )
    assert lines[f"{backend.model}, output_tokens"][1] == one.usage.output_tokens
    assert lines[f"{FAKE_EMBEDDING_MODEL}, embedding_tokens"][1] == embedded.usage.prompt_tokens
    assert all(r.quantity_unit == "tokens" for r in by_line.data[0].results)
    output_cost = output_only.data[0].results[0].amount.value
    assert output_cost == pytest.approx(
        (one.usage.output_tokens + two.usage.output_tokens) * OUTPUT / 1e6  # type: ignore[union-attr]
    )
    assert len(week.data) == 7
    assert sum(len(b.results) for b in week.data) == 1


async def test_moderations_vector_stores_and_unserved_usage_reports(
    priced: Settings, backend: FakeBackend
) -> None:
    start = int(time.time()) // 86_400 * 86_400
    async with audited_client(priced) as raw:
        alpha = await new_tenant(raw, "alpha")
        await alpha.client.moderations.create(input=["first text", "a second text"])
        upload = await alpha.client.files.create(
            file=("notes.txt", b"agentloom keeps a ledger " * 20), purpose="assistants"
        )
        store = await alpha.client.vector_stores.create(name="notes", file_ids=[upload.id])
        await eventually(
            lambda: alpha.client.vector_stores.retrieve(store.id),
            lambda s: s.file_counts.completed == 1,
        )
        usage = sdk(raw, admin_api_key=ADMIN).admin.organization.usage
        moderations = await eventually(
            lambda: usage.moderations(start_time=start, group_by=["project_id", "model"], limit=1),
            lambda p: bool(p.data[0].results),
        )
        stored = await usage.vector_stores(start_time=start, group_by=["project_id"], limit=1)
        images = await usage.images(start_time=start, limit=1)
        speeches = await usage.audio_speeches(start_time=start, limit=1)
        transcriptions = await usage.audio_transcriptions(start_time=start, limit=1)
        decisions = await usage.decisions(start_time=start, limit=1)
        with pytest.raises(openai.BadRequestError):
            await usage.vector_stores(start_time=start, group_by=["model"])  # type: ignore[list-item]

    (moderation,) = moderations.data[0].results
    assert (moderation.project_id, moderation.model) == (alpha.project_id, "rules")
    assert moderation.num_model_requests == 1
    assert moderation.input_tokens > 0
    (held,) = stored.data[0].results
    assert held.project_id == alpha.project_id
    assert held.usage_bytes > 0
    for empty in (images, speeches, transcriptions, decisions):
        assert len(empty.data) == 1
        assert empty.data[0].results == []


# --- spend limits and alerts -----------------------------------------------------------------


async def test_a_project_over_its_spend_limit_gets_insufficient_quota(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha, beta = await new_tenant(raw, "alpha"), await new_tenant(raw, "beta")
        org = sdk(raw, admin_api_key=ADMIN).admin.organization
        limit = await org.projects.spend_limit.update(
            alpha.project_id, currency="USD", interval="month", threshold_amount=1
        )
        await alpha.client.responses.create(model=backend.model, input="Hello there")

        async def refused() -> int:
            reply = await raw.post(
                "/responses", json={"model": backend.model, "input": "Hi"}, headers=alpha.headers
            )
            return reply.status_code

        await eventually(refused, lambda status: status == 429)
        with pytest.raises(openai.RateLimitError) as over:
            await alpha.client.chat.completions.create(
                model=backend.model, messages=[{"role": "user", "content": "Hi"}]
            )
        others = await beta.client.responses.create(model=backend.model, input="Hi")
        models = await alpha.client.models.list()  # not traffic: never refused
        enforcing = await org.projects.spend_limit.retrieve(alpha.project_id)
        deleted = await org.projects.spend_limit.delete(alpha.project_id)
        again = await alpha.client.responses.create(model=backend.model, input="Hi")
        with pytest.raises(openai.NotFoundError):
            await org.projects.spend_limit.retrieve(alpha.project_id)
        with pytest.raises(openai.NotFoundError):
            await org.projects.spend_limit.retrieve("proj_nothing")
        failed = await eventually(lambda: logged(raw, errors="true"), lambda rows: len(rows) >= 2)

    assert (limit.object, limit.threshold_amount, limit.currency) == (
        "project.spend_limit",
        1,
        "USD",
    )
    assert limit.enforcement.status == "inactive"
    error: Any = over.value.body
    assert (error["type"], error["code"]) == ("insufficient_quota", "insufficient_quota")
    assert "spend limit" in error["message"]
    assert others.status == "completed"
    assert models.data
    assert enforcing.enforcement.status == "enforcing"
    assert (deleted.object, deleted.deleted) == ("project.spend_limit.deleted", True)
    assert again.status == "completed"
    # (the refusals; a loaded host may add a backend call that timed out)
    assert {r["error_code"] for r in failed if r["status"] == 429} == {"insufficient_quota"}


async def test_the_organizations_limit_holds_every_project(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha, beta = await new_tenant(raw, "alpha"), await new_tenant(raw, "beta")
        org = sdk(raw, admin_api_key=ADMIN).admin.organization
        await alpha.client.responses.create(model=backend.model, input="Hello there " * 50)
        await eventually(
            lambda: org.usage.costs(start_time=int(time.time()) - 60, limit=1),
            lambda p: bool(p.data[0].results) and p.data[0].results[0].amount.value > 0.01,
        )
        limit = await org.spend_limit.update(currency="USD", interval="month", threshold_amount=1)
        with pytest.raises(openai.RateLimitError) as over:
            await beta.client.responses.create(model=backend.model, input="Hi")
        retrieved = await org.spend_limit.retrieve()
        await org.spend_limit.delete()
        fine = await beta.client.responses.create(model=backend.model, input="Hi")

    assert limit.object == "organization.spend_limit"
    assert limit.enforcement.status == "enforcing"  # the spend was there already
    assert over.value.code == "insufficient_quota"
    assert "the organization" in over.value.message
    assert retrieved.threshold_amount == 1
    assert fine.status == "completed"


async def test_spend_alerts_in_openais_shapes_send_one_signed_event_a_month(
    priced: Settings, backend: FakeBackend, receiver: WebhookReceiver
) -> None:
    allowed = priced.webhooks.model_copy(update={"allow_loopback": True})
    config = priced.model_copy(update={"webhooks": allowed})
    async with audited_client(config) as raw:
        alpha = await new_tenant(raw, "alpha")
        org = sdk(raw, admin_api_key=ADMIN).admin.organization
        endpoint = await raw.post(
            "/webhook_endpoints",
            json={
                "name": "spend",
                "url": receiver.url(),
                "event_types": ["agentloom.spend_alert.triggered"],
            },
            headers=alpha.headers,
        )
        channel = {"type": "email", "recipients": ["ops@example.com"]}
        alerts = org.projects.spend_alerts
        alert = await alerts.create(
            alpha.project_id,
            currency="USD",
            interval="month",
            notification_channel=channel,  # type: ignore[arg-type]
            threshold_amount=1,
        )
        never = await alerts.create(
            alpha.project_id,
            currency="USD",
            interval="month",
            notification_channel=channel,  # type: ignore[arg-type]
            threshold_amount=10**9,
        )
        listed = [a async for a in alerts.list(alpha.project_id)]
        changed = await alerts.update(
            never.id,
            project_id=alpha.project_id,
            currency="USD",
            interval="month",
            notification_channel={**channel, "subject_prefix": "[ops]"},  # type: ignore[arg-type]
            threshold_amount=10**8,
        )
        for _ in range(2):
            await alpha.client.responses.create(model=backend.model, input="Hello there")
        (delivery,) = await receiver.wait_for(1)
        await asyncio.sleep(0.5)  # refreshes that come after do not send it again
        deleted = await alerts.delete(never.id, project_id=alpha.project_id)
        org_alert = await org.spend_alerts.create(
            currency="USD",
            interval="month",
            notification_channel=channel,  # type: ignore[arg-type]
            threshold_amount=5,
        )
        org_alerts = [a async for a in org.spend_alerts.list()]
        with pytest.raises(openai.NotFoundError):
            await alerts.retrieve(org_alert.id, project_id=alpha.project_id)

    secret = endpoint.json()["signing_secret"]
    event = sdk(raw, webhook_secret=secret).webhooks.verify_signature(
        delivery.body, delivery.headers, secret=secret
    )
    body = json.loads(delivery.body)
    assert event is None
    assert len(receiver.received) == 1
    assert (alert.object, alert.threshold_amount) == ("project.spend_alert", 1)
    assert alert.notification_channel.recipients == ["ops@example.com"]
    assert [a.id for a in listed] == [alert.id, never.id]
    assert changed.notification_channel.subject_prefix == "[ops]"
    assert body["type"] == "agentloom.spend_alert.triggered"
    data = body["data"]
    assert (data["id"], data["object"], data["project_id"]) == (
        alert.id,
        "project.spend_alert",
        alpha.project_id,
    )
    assert data["spend_amount"] >= 1
    assert data["threshold_amount"] == 1
    assert (deleted.id, deleted.deleted) == (never.id, True)
    assert org_alert.object == "organization.spend_alert"
    assert [a.id for a in org_alerts] == [org_alert.id]


async def test_bad_spend_requests_are_400s_naming_the_field(
    raw: httpx2.AsyncClient, alpha: Tenant
) -> None:
    org = sdk(raw, admin_api_key=ADMIN).admin.organization
    with pytest.raises(openai.BadRequestError) as currency:
        await org.spend_limit.update(currency="EUR", interval="month", threshold_amount=1)  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError) as negative:
        await org.projects.spend_limit.update(
            alpha.project_id, currency="USD", interval="month", threshold_amount=-1
        )
    with pytest.raises(openai.NotFoundError):
        await org.spend_alerts.retrieve("spalert_none")
    with pytest.raises(openai.NotFoundError):
        await org.spend_limit.retrieve()

    assert currency.value.param == "currency"
    assert negative.value.param == "threshold_amount"


async def test_a_managed_agents_message_is_logged_with_what_its_turn_cost(
    priced: Settings, backend: FakeBackend
) -> None:
    async with audited_client(priced) as raw:
        alpha = await new_tenant(raw, "alpha")
        body = {"name": "helper", "agent_type": "orchestrator", "config": {"model": backend.model}}
        agent = (await raw.post("/managed-agents", json=body, headers=alpha.headers)).json()
        reply = await raw.post(
            f"/managed-agents/{agent['id']}/messages",
            json={"content": "Hi", "stream": True},
            headers=alpha.headers,
        )
        rows = await eventually(
            lambda: logged(raw, **{"endpoints[]": "managed_agents.messages"}),
            lambda rows: len(rows) == 1,
        )

    assert reply.status_code == 200
    (row,) = rows
    assert (row["project_id"], row["model"], row["deployment"]) == (
        alpha.project_id,
        backend.model,
        "fake",
    )
    assert row["input_tokens"] > 0
    assert row["cost"] == pytest.approx(dollars(row["input_tokens"], row["output_tokens"]))
