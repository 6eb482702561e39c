"""Webhook endpoints (``/v1/webhook_endpoints``, per project) and the events they receive.

An endpoint's URL passes the same policy as an MCP server's (no link-local or metadata hosts;
loopback only when allowed) and must be ``https`` unless the server allows plain ``http``. Its
signing secret is shown when it is made or rotated, and kept sealed: the server signs every
delivery with it. A background response that ends is announced as ``response.<status>``, a
batch as ``batch.<status>``: a delivery per endpoint that wants that type, queued as a durable
job (:mod:`agentloom.services.jobs.webhook_delivery` sends it and retries it).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from agentloom.api.lists import ListPage
from agentloom.api.response import Response
from agentloom.api.spend import NotificationChannel
from agentloom.api.webhooks import (
    OPENAI_ONLY_EVENTS,
    RESPONSE_EVENTS,
    SENT_EVENTS,
    SPEND_ALERT_EVENT,
    CreateWebhookEndpointRequest,
    DeletedWebhookEndpoint,
    DeliveryAttempt,
    EventData,
    RotateSecretRequest,
    SpendAlertData,
    SpendAlertEvent,
    TestWebhookRequest,
    UpdateWebhookEndpointRequest,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEndpointTestResult,
    WebhookEndpointWithSecret,
    WebhookEvent,
    WebhookEventTypeList,
)
from agentloom.config import WebhookSettings
from agentloom.errors import InvalidRequestError, NotFoundError, UpstreamError
from agentloom.ids import new_id
from agentloom.redact import redact_url
from agentloom.sealing import Sealer
from agentloom.services.jobs import webhook_signing as signing
from agentloom.services.jobs.webhook_delivery import WebhookSender
from agentloom.storage.spend import NANOS_PER_CENT, ORGANIZATION, AlertRow
from agentloom.storage.webhooks import DeliveryRow, EndpointRow, Event, SqlWebhookStore
from agentloom.tenancy import DEFAULT_PROJECT, acting_for, current_key
from agentloom.tools.mcp.policy import UrlPolicy

SEAL_PURPOSE = "webhook_secret"
OLD_SECRET_GRACE = 24 * 3600.0  # seconds a rotated-out secret still signs, when asked for


def webhook_policy(settings: WebhookSettings) -> UrlPolicy:
    return UrlPolicy(
        allow_hosts=frozenset(h.lower() for h in settings.allow_hosts),
        deny_hosts=frozenset(h.lower() for h in settings.deny_hosts),
        allow_loopback=settings.allow_loopback,
        allow_private=settings.allow_private,
        subject="webhook endpoint",
    )


class WebhooksService:
    def __init__(
        self,
        store: SqlWebhookStore,
        sealer: Sealer,
        sender: WebhookSender,
        settings: WebhookSettings,
        *,
        nudge: Callable[[], None],
    ) -> None:
        self._store = store
        self._sealer = sealer
        self._sender = sender
        self._settings = settings
        self._policy = webhook_policy(settings)
        self._nudge = nudge

    # --- endpoints -------------------------------------------------------------------------

    async def create(self, request: CreateWebhookEndpointRequest) -> WebhookEndpointWithSecret:
        await self.check_url(request.url)
        now = time.time()
        secret = signing.new_secret()
        row = EndpointRow(
            id=new_id("whep"),
            name=request.name,
            url=request.url,
            event_types=json.dumps(_event_types(request.event_types)),
            secret=self._sealer.seal(SEAL_PURPOSE, secret.encode()),
            secret_hint=signing.hint(secret),
            created_at=now,
            updated_at=now,
        )
        await self._store.create(row)
        return WebhookEndpointWithSecret(**_wire(row).model_dump(), signing_secret=secret)

    async def get(self, endpoint_id: str) -> WebhookEndpoint:
        return _wire(await self._row(endpoint_id))

    async def list_endpoints(self, after: str | None, limit: int) -> ListPage[WebhookEndpoint]:
        page = await self._store.list_page(after, limit)
        if page is None:
            raise NotFoundError(f"No webhook endpoint found with id '{after}'.", param="after")
        return ListPage.of([_wire(row) for row in page.data], has_more=page.has_more)

    async def update(
        self, endpoint_id: str, request: UpdateWebhookEndpointRequest
    ) -> WebhookEndpoint:
        row = await self._row(endpoint_id)
        values: dict[str, Any] = {}
        if request.name is not None and request.name != row.name:
            values["name"] = request.name
        if request.url is not None and request.url != row.url:
            await self.check_url(request.url)
            values["url"] = request.url
        if request.event_types is not None:
            types = _event_types(request.event_types)
            if types != row.types:
                values["event_types"] = json.dumps(types)
        if values:
            values["updated_at"] = time.time()
        updated = await self._store.update(endpoint_id, values)
        return _wire(updated or row)

    async def delete(self, endpoint_id: str) -> DeletedWebhookEndpoint:
        if not await self._store.delete(endpoint_id):
            raise _not_found(endpoint_id)
        return DeletedWebhookEndpoint(id=endpoint_id)

    async def rotate_secret(
        self, endpoint_id: str, request: RotateSecretRequest
    ) -> WebhookEndpointWithSecret:
        row = await self._row(endpoint_id)
        now = time.time()
        secret = signing.new_secret()
        keep = request.keep_old_secret_active_for_24_hours
        values = {
            "secret": self._sealer.seal(SEAL_PURPOSE, secret.encode()),
            "secret_hint": signing.hint(secret),
            "old_secret": row.secret if keep else None,
            "old_secret_until": now + OLD_SECRET_GRACE if keep else None,
            "updated_at": now,
        }
        updated = await self._store.update(endpoint_id, values)
        if updated is None:
            raise _not_found(endpoint_id)
        return WebhookEndpointWithSecret(**_wire(updated).model_dump(), signing_secret=secret)

    async def test(
        self, endpoint_id: str, request: TestWebhookRequest
    ) -> WebhookEndpointTestResult:
        """Send a sample event of ``event_type`` now, and say what the endpoint answered."""
        row = await self._row(endpoint_id)
        event_type = _event_types([request.event_type], param="event_type")[0]
        await self.check_url(row.url)
        event = WebhookEvent(
            id=new_id("evt"),
            created_at=int(time.time()),
            type=event_type,
            data=EventData(id=new_id(event_type.partition(".")[0][:4])),
        )
        attempt = await self._sender.send(
            row.url, new_id("wh"), event.model_dump_json(), self.secrets(row)
        )
        if attempt.status_code is None:
            raise UpstreamError(
                f"The webhook endpoint could not be reached: {attempt.error}",
                code="webhook_endpoint_unreachable",
            )
        return WebhookEndpointTestResult(
            webhook_endpoint_id=row.id, event_type=event_type, status_code=attempt.status_code
        )

    async def deliveries(
        self, endpoint_id: str, after: str | None, limit: int
    ) -> ListPage[WebhookDelivery]:
        await self._row(endpoint_id)
        page = await self._store.deliveries(endpoint_id, after, limit)
        if page is None:
            raise NotFoundError(f"No webhook delivery found with id '{after}'.", param="after")
        return ListPage.of([delivery_wire(row) for row in page.data], has_more=page.has_more)

    def event_types(self) -> WebhookEventTypeList:
        return WebhookEventTypeList(data=list(SENT_EVENTS))

    # --- for deliveries ----------------------------------------------------------------------

    def secrets(self, row: EndpointRow) -> list[str]:
        """The secrets a delivery to ``row`` is signed with: its own, and the one it replaced
        while that one is kept."""
        sealed = [row.secret]
        if row.old_secret is not None and (row.old_secret_until or 0) > time.time():
            sealed.append(row.old_secret)
        return [self._sealer.open(SEAL_PURPOSE, s).decode() for s in sealed]

    async def check_url(self, url: str, param: str = "url") -> None:
        """Refuse a URL the server's policy does not let webhooks reach."""
        await self._policy.check(url, param=param)
        parts = urlsplit(url)
        if parts.scheme != "http" or self._plain_http_allowed(parts.hostname):
            return
        raise InvalidRequestError(
            f"The webhook endpoint URL '{redact_url(url)}' is refused: "
            "it must be https (plain http only when the server allows it: [webhooks] "
            "allow_http).",
            param=param,
            code="invalid_value",
        )

    def _plain_http_allowed(self, host: str | None) -> bool:
        loopback = host in ("127.0.0.1", "::1", "localhost")
        return self._settings.allow_http or (self._settings.allow_loopback and loopback)

    async def announce(self, response: Response) -> None:
        """A background response ended: queue its event for the endpoints that want it."""
        event_type = f"response.{response.status}"
        if not response.background or event_type not in RESPONSE_EVENTS:
            return
        await self.announce_event(event_type, response.id, response.completed_at)

    async def announce_event(self, event_type: str, subject: str, at: float | None) -> None:
        """``subject`` (a response, a batch) ended as ``event_type``: queue the event for the
        endpoints that want it. Announced again (its job ran again), it adds nothing."""
        digest = hashlib.sha256(f"{subject}/{event_type}".encode()).hexdigest()
        now = time.time()
        event = WebhookEvent(
            id="evt_" + digest[:32],
            created_at=int(at or now),
            type=event_type,
            data=EventData(id=subject),
        )
        stored = Event(event.id, event_type, event.model_dump_json(), now)
        if await self._store.announce(stored, current_key()):
            self._nudge()

    async def spend_alert(self, alert: AlertRow, spent: int, period: int) -> None:
        """A spend alert's threshold was reached this month: queue its event for the endpoints
        that want it, of the alert's project (the default project's, for the organization's)."""
        project = DEFAULT_PROJECT if alert.scope == ORGANIZATION else alert.scope
        digest = hashlib.sha256(f"{alert.id}/{period}".encode()).hexdigest()
        now = time.time()
        data = SpendAlertData(
            id=alert.id,
            object="organization.spend_alert" if project != alert.scope else "project.spend_alert",
            project_id=None if project != alert.scope else project,
            threshold_amount=alert.threshold_amount,
            spend_amount=spent // NANOS_PER_CENT,
            period_start=period,
            notification_channel=NotificationChannel.model_validate(alert.channel),
        )
        event = SpendAlertEvent(id="evt_" + digest[:32], created_at=int(now), data=data)
        stored = Event(event.id, SPEND_ALERT_EVENT, event.model_dump_json(), now)
        with acting_for(project):
            if await self._store.announce(stored, None):
                self._nudge()

    async def _row(self, endpoint_id: str) -> EndpointRow:
        row = await self._store.get(endpoint_id)
        if row is None:
            raise _not_found(endpoint_id)
        return row


def _wire(row: EndpointRow) -> WebhookEndpoint:
    return WebhookEndpoint(
        id=row.id,
        name=row.name,
        url=row.url,
        event_types=row.types,
        created_at=int(row.created_at),
        updated_at=int(row.updated_at),
        signing_secret_hint=row.secret_hint,
    )


def delivery_wire(row: DeliveryRow) -> WebhookDelivery:
    return WebhookDelivery(
        id=row.id,
        webhook_endpoint_id=row.endpoint_id,
        event_id=row.event_id,
        event_type=row.event_type,
        status=row.status,
        attempts=[DeliveryAttempt.model_validate(a) for a in json.loads(row.attempts)],
        created_at=int(row.created_at),
        next_attempt_at=None if row.next_attempt_at is None else int(row.next_attempt_at),
        ended_at=None if row.ended_at is None else int(row.ended_at),
    )


def _event_types(types: list[str], param: str = "event_types") -> list[str]:
    """The types asked for, once each, in the order given; a type this server never sends is
    refused by name."""
    for event_type in types:
        if event_type in SENT_EVENTS:
            continue
        sent = ", ".join(SENT_EVENTS)
        why = (
            "is an OpenAI event type this server does not send"
            if event_type in OPENAI_ONLY_EVENTS
            else "is not a webhook event type"
        )
        raise InvalidRequestError(
            f"'{event_type}' {why}; it sends: {sent}.", param=param, code="invalid_value"
        )
    return list(dict.fromkeys(types))


def _not_found(endpoint_id: str) -> NotFoundError:
    return NotFoundError(
        f"No webhook endpoint found with id '{endpoint_id}'.", param="webhook_endpoint_id"
    )
