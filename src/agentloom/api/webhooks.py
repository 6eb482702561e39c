"""Webhook endpoints and the events they receive, as the ``openai`` SDK shapes them
(``openai.types.webhooks``), and the deliveries (agentloom's own: what each attempt got)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentloom.api.spend import NotificationChannel
from agentloom.api.wire import WireModel

# The event types agentloom sends (OpenAI has more: evals, fine-tuning ...).
RESPONSE_EVENTS = (
    "response.completed",
    "response.failed",
    "response.cancelled",
    "response.incomplete",
)
BATCH_EVENTS = ("batch.completed", "batch.failed", "batch.expired", "batch.cancelled")
# agentloom's own types: a spend alert's threshold reached (docs/webhooks.md)
SPEND_ALERT_EVENT = "agentloom.spend_alert.triggered"
AGENTLOOM_EVENTS = (SPEND_ALERT_EVENT,)
SENT_EVENTS = (*RESPONSE_EVENTS, *BATCH_EVENTS, *AGENTLOOM_EVENTS)
# OpenAI's other types, which this server never sends: asking for them is refused by name.
OPENAI_ONLY_EVENTS = frozenset(
    {
        "eval.run.succeeded",
        "eval.run.failed",
        "eval.run.canceled",
        "fine_tuning.job.succeeded",
        "fine_tuning.job.failed",
        "fine_tuning.job.cancelled",
        "realtime.call.incoming",
        "video.completed",
        "video.failed",
        "agent.environment.ready",
        "agent.environment.failed",
        "agent.environment.suspended",
        "agent.environment.expired",
        "agent.session.created",
        "agent.session.action_required",
        "agent.session.in_progress",
        "agent.session.idle",
        "agent.session.failed",
        "safety.alert.created",
    }
)
NAME = Field(min_length=1, max_length=256)
URL = Field(min_length=1, max_length=2048)
EVENT_TYPES = Field(min_length=1, max_length=64)


class WebhookEndpoint(WireModel):
    id: str
    object: Literal["webhook_endpoint"] = "webhook_endpoint"
    name: str
    url: str
    event_types: list[str]
    created_at: int
    updated_at: int | None = None
    signing_secret_hint: str | None = None


class WebhookEndpointWithSecret(WebhookEndpoint):
    """An endpoint as created or with its secret rotated: the only times the secret is shown."""

    signing_secret: str


class CreateWebhookEndpointRequest(WireModel):
    name: str = NAME
    url: str = URL
    event_types: list[str] = EVENT_TYPES


class UpdateWebhookEndpointRequest(WireModel):
    name: str | None = Field(default=None, min_length=1, max_length=256)
    url: str | None = Field(default=None, min_length=1, max_length=2048)
    event_types: list[str] | None = Field(default=None, min_length=1, max_length=64)


class RotateSecretRequest(WireModel):
    keep_old_secret_active_for_24_hours: bool = False


class TestWebhookRequest(WireModel):
    event_type: str = Field(min_length=1, max_length=64)


class WebhookEndpointTestResult(WireModel):
    object: Literal["webhook_endpoint.test"] = "webhook_endpoint.test"
    webhook_endpoint_id: str
    event_type: str
    status_code: int
    success: Literal[True] = True


class DeletedWebhookEndpoint(WireModel):
    id: str
    object: Literal["webhook_endpoint.deleted"] = "webhook_endpoint.deleted"
    deleted: bool = True


class WebhookEventTypeList(WireModel):
    object: Literal["list"] = "list"
    data: list[str]


class EventData(WireModel):
    id: str


class WebhookEvent(WireModel):
    """What a delivery's body holds (``openai.types.webhooks.UnwrapWebhookEvent``)."""

    id: str
    object: Literal["event"] = "event"
    created_at: int
    type: str
    data: EventData


class SpendAlertData(WireModel):
    """What a spend alert's event says: the alert, whose spend, how much (cents) this month."""

    id: str  # the alert's
    object: Literal["organization.spend_alert", "project.spend_alert"]
    project_id: str | None = None  # a project's alert
    threshold_amount: int
    spend_amount: int
    currency: Literal["USD"] = "USD"
    interval: Literal["month"] = "month"
    period_start: int  # the month's start (unix seconds, UTC)
    notification_channel: NotificationChannel


class SpendAlertEvent(WireModel):
    id: str
    object: Literal["event"] = "event"
    created_at: int
    type: Literal["agentloom.spend_alert.triggered"] = "agentloom.spend_alert.triggered"
    data: SpendAlertData


class DeliveryAttempt(WireModel):
    attempted_at: float
    duration_ms: float
    status_code: int | None = None  # None: no HTTP answer (see error)
    error: str | None = None


class WebhookDelivery(WireModel):
    """One event sent to one endpoint, with every attempt (agentloom's own object)."""

    id: str  # the webhook-id header of every attempt
    object: Literal["webhook_endpoint.delivery"] = "webhook_endpoint.delivery"
    webhook_endpoint_id: str
    event_id: str
    event_type: str
    status: Literal["pending", "delivered", "failed"]
    attempts: list[DeliveryAttempt]
    created_at: int
    next_attempt_at: int | None = None
    ended_at: int | None = None
