"""Webhooks through the official client: endpoints per project, deliveries signed so that
``client.webhooks.unwrap`` verifies them, retried from the job table with the same webhook-id,
every attempt visible."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from openai.types.webhooks import (
    ResponseCancelledWebhookEvent,
    ResponseCompletedWebhookEvent,
    ResponseFailedWebhookEvent,
)

from agentloom.config import Settings, WebhookSettings
from agentloom.errors import UpstreamError
from agentloom.inference.scripted import ScriptedModel, delay, raise_error
from agentloom.testing.backend import FakeBackend
from tests.plugins.server import make_settings
from tests.plugins.webhooks import Received, WebhookReceiver
from tests.server.test_background import settled

pytestmark = pytest.mark.both_databases  # what these check depends on the storage

RESPONSE_TYPES = [
    "response.completed",
    "response.failed",
    "response.cancelled",
    "response.incomplete",
]
BATCH_TYPES = ["batch.completed", "batch.failed", "batch.expired", "batch.cancelled"]


@pytest.fixture
def settings(backend: FakeBackend, database_url: str, tmp_path: Path) -> Settings:
    base = make_settings(backend, database_url, files_directory=tmp_path / "files")
    hooks = WebhookSettings(allow_loopback=True, retry_delays=[0.05, 0.05], timeout=2.0)
    return base.model_copy(update={"webhooks": hooks})


async def endpoint(
    client: openai.AsyncOpenAI, receiver: WebhookReceiver, types: list[str] | None = None
) -> Any:
    return await client.webhooks.create(
        name="hooks", url=receiver.url(), event_types=types or RESPONSE_TYPES
    )


def unwrap(client: openai.AsyncOpenAI, received: Received, secret: str) -> Any:
    return client.webhooks.unwrap(received.body, received.headers, secret=secret)


async def test_endpoints_are_made_read_listed_changed_and_deleted(
    client: openai.AsyncOpenAI, receiver: WebhookReceiver
) -> None:
    made = await endpoint(client, receiver, ["response.completed"])
    other = await endpoint(client, receiver, ["response.failed"])

    assert made.signing_secret.startswith("whsec_")
    assert (made.signing_secret_hint or "").endswith(made.signing_secret[-4:])
    assert made.signing_secret not in (await client.webhooks.retrieve(made.id)).model_dump_json()
    listed = [e.id async for e in client.webhooks.list()]
    assert listed == [other.id, made.id]  # newest first
    page = await client.webhooks.list(limit=1, after=other.id)
    assert [e.id for e in page.data] == [made.id]

    same = await client.webhooks.update(made.id, name="hooks")
    assert same.updated_at == made.updated_at  # nothing changed: not advanced
    renamed = await client.webhooks.update(
        made.id, name="renamed", event_types=["response.completed", "response.cancelled"]
    )
    assert (renamed.name, renamed.event_types) == (
        "renamed",
        ["response.completed", "response.cancelled"],
    )
    types = await client.webhooks.event_types.list()
    assert types.data == [*RESPONSE_TYPES, *BATCH_TYPES, "agentloom.spend_alert.triggered"]

    deleted = await client.webhooks.delete(made.id)
    assert (deleted.id, deleted.deleted) == (made.id, True)
    with pytest.raises(openai.NotFoundError):
        await client.webhooks.retrieve(made.id)
    with pytest.raises(openai.NotFoundError):
        await client.webhooks.delete(made.id)


@pytest.mark.parametrize(
    ("url", "types", "param", "says"),
    [
        ("{hook}", ["eval.run.succeeded"], "event_types", "does not send"),
        ("{hook}", ["response.done"], "event_types", "not a webhook event type"),
        ("{hook}", [], "event_types", ""),
        ("http://169.254.169.254/hook", RESPONSE_TYPES, "url", "metadata"),
        ("ftp://example.com/hook", RESPONSE_TYPES, "url", "http(s) URL"),
        ("http://10.1.2.3/hook", RESPONSE_TYPES, "url", "must be https"),
    ],
)
async def test_a_bad_endpoint_is_refused_by_name(
    client: openai.AsyncOpenAI,
    receiver: WebhookReceiver,
    url: str,
    types: list[str],
    param: str,
    says: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        await client.webhooks.create(
            name="bad",
            url=url.format(hook=receiver.url()),
            event_types=types,  # type: ignore[arg-type]
        )

    assert refused.value.param == param
    assert says in refused.value.message


async def test_loopback_is_refused_unless_allowed(
    backend: FakeBackend, database_url: str, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    from tests.plugins.server import audited_client
    from tests.server.test_background import sdk

    async with audited_client(make_settings(backend, database_url)) as raw:
        with pytest.raises(openai.BadRequestError) as refused:
            await endpoint(sdk(raw), receiver)

    assert "loopback" in refused.value.message


async def test_a_finished_background_response_is_delivered_signed(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    receiver: WebhookReceiver,
) -> None:
    made = await endpoint(client, receiver, ["response.completed"])
    scripted.add_turn("Done.")
    scripted.add_turn("Not in background.")

    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    await settled(client, queued.id)
    [received] = await receiver.wait_for(1)
    await client.responses.create(model=backend.model, input="Hi")  # foreground: no webhook
    await asyncio.sleep(0.2)

    event = unwrap(client, received, made.signing_secret)
    assert isinstance(event, ResponseCompletedWebhookEvent)
    assert (event.type, event.data.id, event.object) == ("response.completed", queued.id, "event")
    assert received.headers["webhook-id"].startswith("wh_")
    assert len(receiver.received) == 1
    with pytest.raises(openai.InvalidWebhookSignatureError):
        unwrap(client, received, "whsec_" + "A" * 44)
    deliveries = await _deliveries(client, made.id)
    assert [(d["status"], len(d["attempts"])) for d in deliveries] == [("delivered", 1)]
    assert deliveries[0]["id"] == received.headers["webhook-id"]
    assert deliveries[0]["attempts"][0]["status_code"] == 200


async def test_failed_and_cancelled_responses_are_announced(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    receiver: WebhookReceiver,
) -> None:
    made = await endpoint(client, receiver, ["response.failed", "response.cancelled"])
    scripted.add_turn("start ", delay(5.0), "never")
    scripted.add_turn(raise_error(UpstreamError("backend down", status=500)))

    slow = await client.responses.create(model=backend.model, input="Hi", background=True)
    await asyncio.sleep(0.3)
    await client.responses.cancel(slow.id)
    broken = await client.responses.create(model=backend.model, input="Hi", background=True)
    await settled(client, broken.id)
    received = await receiver.wait_for(2)

    events = {type(e): e for e in (unwrap(client, r, made.signing_secret) for r in received)}
    assert events[ResponseCancelledWebhookEvent].data.id == slow.id
    assert events[ResponseFailedWebhookEvent].data.id == broken.id


async def test_a_failed_delivery_is_retried_under_the_same_id(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    receiver: WebhookReceiver,
) -> None:
    made = await endpoint(client, receiver)
    receiver.answers = [500, 503]
    scripted.add_turn("Done.")

    queued = await client.responses.create(model=backend.model, input="Hi", background=True)
    received = await receiver.wait_for(3)
    delivery = await _ended(client, made.id)

    assert [r.answered for r in received] == [500, 503, 200]
    assert len({r.headers["webhook-id"] for r in received}) == 1
    assert len({r.body for r in received}) == 1
    for one in received:
        assert unwrap(client, one, made.signing_secret).data.id == queued.id
    assert delivery["status"] == "delivered"
    assert [a["status_code"] for a in delivery["attempts"]] == [500, 503, 200]
    assert "next_attempt_at" not in delivery


async def test_a_delivery_fails_after_its_last_retry(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    receiver: WebhookReceiver,
) -> None:
    made = await endpoint(client, receiver)
    receiver.answers = [500, 500, 500, 500]
    scripted.add_turn("Done.")

    await client.responses.create(model=backend.model, input="Hi", background=True)
    await receiver.wait_for(3)
    delivery = await _ended(client, made.id)

    assert delivery["status"] == "failed"
    assert len(delivery["attempts"]) == 3  # the first and two retries
    await asyncio.sleep(0.2)
    assert len(receiver.received) == 3


async def test_an_unreachable_endpoint_records_why(
    client: openai.AsyncOpenAI, backend: FakeBackend, scripted: ScriptedModel
) -> None:
    made = await client.webhooks.create(
        name="gone", url="http://127.0.0.1:9/hook", event_types=["response.completed"]
    )
    scripted.add_turn("Done.")

    await client.responses.create(model=backend.model, input="Hi", background=True)
    delivery = await _ended(client, made.id)

    assert delivery["status"] == "failed"
    assert all(a["error"] and "status_code" not in a for a in delivery["attempts"])
    with pytest.raises(openai.APIStatusError) as unreachable:
        await client.webhooks.test(made.id, event_type="response.completed")
    assert unreachable.value.status_code == 502


async def test_a_rotated_secret_signs_beside_the_old_one_when_kept(
    client: openai.AsyncOpenAI, receiver: WebhookReceiver
) -> None:
    made = await endpoint(client, receiver)

    kept = await client.webhooks.rotate_secret(made.id, keep_old_secret_active_for_24_hours=True)
    result = await client.webhooks.test(made.id, event_type="response.completed")
    replaced = await client.webhooks.rotate_secret(made.id)
    await client.webhooks.test(made.id, event_type="response.failed")
    first, second = await receiver.wait_for(2)

    assert (result.status_code, result.success, result.event_type) == (
        200,
        True,
        "response.completed",
    )
    assert kept.signing_secret != made.signing_secret
    assert kept.signing_secret_hint != made.signing_secret_hint
    assert unwrap(client, first, made.signing_secret).type == "response.completed"
    assert unwrap(client, first, kept.signing_secret).type == "response.completed"
    assert unwrap(client, second, replaced.signing_secret).type == "response.failed"
    for old in (made.signing_secret, kept.signing_secret):
        with pytest.raises(openai.InvalidWebhookSignatureError):
            unwrap(client, second, old)


async def test_a_test_of_an_event_type_it_does_not_send_is_refused(
    client: openai.AsyncOpenAI, receiver: WebhookReceiver
) -> None:
    made = await endpoint(client, receiver)

    with pytest.raises(openai.BadRequestError) as refused:
        await client.webhooks.test(made.id, event_type="eval.run.succeeded")

    assert refused.value.param == "event_type"
    assert receiver.received == []


async def test_a_deleted_endpoint_gets_no_more_deliveries(
    client: openai.AsyncOpenAI,
    backend: FakeBackend,
    scripted: ScriptedModel,
    receiver: WebhookReceiver,
) -> None:
    made = await endpoint(client, receiver)
    receiver.answers = [500]
    scripted.add_turn("Done.")

    await client.responses.create(model=backend.model, input="Hi", background=True)
    await receiver.wait_for(1)
    await client.webhooks.delete(made.id)
    await asyncio.sleep(0.3)

    assert len(receiver.received) == 1


async def test_raw_errors_are_openai_shaped(http: httpx2.AsyncClient) -> None:
    missing = await http.get("/webhook_endpoints/whep_nope")
    bad_json = await http.post("/webhook_endpoints", content=b"{")
    extra = await http.post(
        "/webhook_endpoints",
        json={"name": "x", "url": "https://example.com", "event_types": [], "color": "red"},
    )

    assert missing.status_code == 404
    assert missing.json()["error"]["param"] == "webhook_endpoint_id"
    assert bad_json.status_code == 400
    assert extra.status_code == 400


async def _deliveries(client: openai.AsyncOpenAI, endpoint_id: str) -> list[dict[str, Any]]:
    reply = await client.get(
        f"/webhook_endpoints/{endpoint_id}/deliveries", cast_to=httpx2.Response
    )
    data: list[dict[str, Any]] = json.loads(reply.content)["data"]
    return data


async def _ended(client: openai.AsyncOpenAI, endpoint_id: str) -> dict[str, Any]:
    """The endpoint's one delivery once it is delivered or failed."""
    for _ in range(250):
        deliveries = await _deliveries(client, endpoint_id)
        if deliveries and deliveries[0]["status"] != "pending":
            return deliveries[0]
        await asyncio.sleep(0.02)
    raise AssertionError(f"the delivery to {endpoint_id} did not end")
