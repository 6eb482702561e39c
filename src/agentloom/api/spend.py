"""Spend limits and alerts, as OpenAI's Admin API shapes them
(``openai.types.admin.organization``: ``OrganizationSpendLimit``, ``OrganizationSpendAlert``
and the ``projects`` ones); agentloom's request log rows (``organization.request``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field

from agentloom.api.integers import INT64_MAX
from agentloom.api.wire import Nullable, WireModel

__all__ = [
    "CreateSpendAlertRequest",
    "LoggedRequestObject",
    "NotificationChannel",
    "SpendAlert",
    "SpendAlertDeleted",
    "SpendLimit",
    "SpendLimitDeleted",
    "UpdateSpendLimitRequest",
]

Cents: TypeAlias = Annotated[int, Field(ge=0, le=INT64_MAX)]


class Enforcement(WireModel):
    status: Literal["inactive", "enforcing"]


class SpendLimit(WireModel):
    object: Literal["organization.spend_limit", "project.spend_limit"]
    currency: Literal["USD"] = "USD"
    interval: Literal["month"] = "month"
    threshold_amount: int  # cents
    enforcement: Enforcement


class SpendLimitDeleted(WireModel):
    object: Literal["organization.spend_limit.deleted", "project.spend_limit.deleted"]
    deleted: bool = True


class UpdateSpendLimitRequest(WireModel):
    currency: Literal["USD"]
    interval: Literal["month"]
    threshold_amount: Cents


class NotificationChannel(WireModel):
    """Where an alert is told (OpenAI's: email). agentloom sends every alert as a signed
    webhook event (``agentloom.spend_alert.triggered``) and keeps the channel as given."""

    type: Literal["email"]
    recipients: list[str] = Field(max_length=100)
    subject_prefix: str | None = Field(default=None, max_length=256)


class CreateSpendAlertRequest(WireModel):
    currency: Literal["USD"]
    interval: Literal["month"]
    notification_channel: NotificationChannel
    threshold_amount: Cents


class SpendAlert(WireModel):
    id: str
    object: Literal["organization.spend_alert", "project.spend_alert"]
    currency: Literal["USD"] = "USD"
    interval: Literal["month"] = "month"
    notification_channel: NotificationChannel
    threshold_amount: int


class SpendAlertDeleted(WireModel):
    id: str
    object: Literal["organization.spend_alert.deleted", "project.spend_alert.deleted"]
    deleted: bool = True


class LoggedRequestObject(WireModel):
    """One request of the traffic (agentloom's own object): who asked, for what, what it used
    and cost (``cost`` in dollars), how long it took and how it ended."""

    id: str  # its x-request-id
    object: Literal["organization.request"] = "organization.request"
    created_at: float  # unix seconds
    project_id: str
    api_key_id: Nullable[str] = None
    user: Nullable[str] = None
    endpoint: str
    model: Nullable[str] = None
    deployment: Nullable[str] = None  # the provider that served it
    input_tokens: int
    input_cached_tokens: int
    output_tokens: int
    cost: float  # dollars
    latency_ms: float
    time_to_first_token_ms: Nullable[float] = None  # streamed answers
    status: int  # the HTTP status
    error_code: Nullable[str] = None
    response_id: Nullable[str] = None  # the stored response, or chat completion (store: true)
    batch_id: Nullable[str] = None  # a request of a batch: the batch


class CostsBucket(WireModel):
    """One day of ``/v1/organization/costs``: each result an ``organization.costs.result``
    (``amount`` in dollars, with what it is grouped by)."""

    object: Literal["bucket"] = "bucket"
    start_time: int
    end_time: int
    results: list[dict[str, Any]]


class CostsPage(WireModel):
    object: Literal["page"] = "page"
    data: list[CostsBucket]
    has_more: bool
    next_page: str | None = None
