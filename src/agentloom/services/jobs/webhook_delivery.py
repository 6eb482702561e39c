"""Sending webhook deliveries: one signed POST per attempt, retried with backoff as a job.

An attempt succeeds on any 2xx answer within ``[webhooks] timeout``; redirects are not
followed. A failed attempt is recorded (status code or error, and how long it took) and the
delivery's job runs again after the next of ``retry_delays``; after the last one the delivery
is ``failed``. Every attempt sends the same body under the same ``webhook-id``, with a fresh
timestamp and signatures, so a receiver can drop a delivery it already handled. The URL is
checked against the policy again before each attempt (its host may resolve elsewhere now).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import httpx2

from agentloom.api.webhooks import DeliveryAttempt
from agentloom.config import WebhookSettings
from agentloom.errors import InvalidRequestError
from agentloom.redact import redact_url, redact_urls
from agentloom.services.jobs.webhook_signing import signed_headers
from agentloom.storage.jobs import JobRow
from agentloom.storage.webhooks import SqlWebhookStore
from agentloom.tls import client_context

if TYPE_CHECKING:
    from agentloom.services.jobs.webhooks import WebhooksService

USER_AGENT = "agentloom-webhooks/1"


class WebhookSender:
    """Made when the first delivery is sent (a client's TLS setup costs tens of milliseconds,
    which a server without webhooks need not pay at start)."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._client: httpx2.AsyncClient | None = None

    async def send(
        self, url: str, message_id: str, body: str, secrets: Sequence[str]
    ) -> DeliveryAttempt:
        if self._client is None:
            self._client = httpx2.AsyncClient(
                verify=client_context(),
                timeout=self._timeout,
                follow_redirects=False,
                headers={"user-agent": USER_AGENT},
            )
        started = time.time()
        headers = signed_headers(secrets, message_id, int(started), body)
        try:
            async with asyncio.timeout(self._timeout):  # the whole attempt, not each read
                reply = await self._client.post(url, content=body.encode(), headers=headers)
        except (httpx2.TimeoutException, TimeoutError):
            return _attempt(started, error=self._timed_out(url))
        except httpx2.HTTPError as exc:
            error = redact_urls(f"{type(exc).__name__}: {exc}".rstrip(": "))
            return _attempt(started, error=error)
        return _attempt(started, status_code=reply.status_code)

    def _timed_out(self, url: str) -> str:
        return (
            f"the webhook endpoint at {redact_url(url)} did not answer within"
            f" {self._timeout:g} s ([webhooks] timeout)"
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _attempt(
    started: float, *, status_code: int | None = None, error: str | None = None
) -> DeliveryAttempt:
    duration = round((time.time() - started) * 1000, 3)
    return DeliveryAttempt(
        attempted_at=started, duration_ms=duration, status_code=status_code, error=error
    )


class WebhookDeliveries:
    """The :class:`~agentloom.services.jobs.runner.JobHandler` of kind ``"webhook"``."""

    def __init__(
        self,
        store: SqlWebhookStore,
        webhooks: WebhooksService,
        sender: WebhookSender,
        settings: WebhookSettings,
    ) -> None:
        self._store = store
        self._webhooks = webhooks
        self._sender = sender
        self._delays = settings.retry_delays

    async def run(self, job: JobRow) -> float | None:
        delivery = await self._store.delivery(job.subject)
        if delivery is None or delivery.status != "pending":
            return None
        endpoint = await self._store.get(delivery.endpoint_id)
        if endpoint is None:
            error = "The webhook endpoint was deleted before the event could be delivered."
            await self._end(delivery.id, "failed", None, error)
            return None
        started = time.time()
        try:
            await self._webhooks.check_url(endpoint.url)
        except InvalidRequestError as exc:
            attempt = _attempt(started, error=exc.message)
        else:
            secrets = self._webhooks.secrets(endpoint)
            attempt = await self._sender.send(endpoint.url, delivery.id, delivery.body, secrets)
        if attempt.status_code is not None and 200 <= attempt.status_code < 300:
            await self._end(delivery.id, "delivered", attempt)
            return None
        tried = len(json.loads(delivery.attempts)) + 1
        if tried > len(self._delays):
            await self._end(delivery.id, "failed", attempt)
            return None
        again = time.time() + self._delays[tried - 1]
        await self._store.record(delivery.id, _json(attempt), {"next_attempt_at": again})
        return again

    async def stopped(self, job: JobRow) -> None:
        await self._end(job.subject, "failed", None, "The delivery was stopped.")

    async def requeued(self, job: JobRow) -> None:
        """Nothing to undo: an attempt either was recorded or is made again."""

    async def abandoned(self, job: JobRow, message: str) -> None:
        await self._end(job.subject, "failed", None, message)

    async def _end(
        self,
        delivery_id: str,
        status: str,
        attempt: DeliveryAttempt | None,
        error: str | None = None,
    ) -> None:
        recorded = _json(attempt) if attempt is not None else None
        if recorded is None and error is not None:
            recorded = {"attempted_at": time.time(), "duration_ms": 0.0, "error": error}
        values = {"status": status, "ended_at": time.time(), "next_attempt_at": None}
        await self._store.record(delivery_id, recorded, values)


def _json(attempt: DeliveryAttempt) -> dict[str, object]:
    return attempt.model_dump(mode="json")
