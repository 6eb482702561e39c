"""Durable work, built for the server's runtime: the job runner with the handlers of this group
(webhook deliveries, the retention sweep), webhooks, schedules and the in-process wake-ups."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

from agentloom.config import Settings
from agentloom.frozen import frozen
from agentloom.metrics import Metrics
from agentloom.sealing import Sealer
from agentloom.services.jobs.retention import RetentionSweep
from agentloom.services.jobs.runner import JobRunner
from agentloom.services.jobs.schedules import Schedules
from agentloom.services.jobs.wakeups import Wakeups
from agentloom.services.jobs.webhook_delivery import WebhookDeliveries, WebhookSender
from agentloom.services.jobs.webhooks import WebhooksService
from agentloom.storage.database import Database
from agentloom.storage.retention import SWEEP_JOB
from agentloom.storage.webhooks import DELIVERY_JOB
from agentloom.tenancy import Policy

__all__ = ["Jobs", "jobs"]


@frozen
class Jobs:
    runner: JobRunner  # other features register their kinds of job with it
    webhooks: WebhooksService
    schedules: Schedules
    wakeups: Wakeups  # where followers of a job's stream wait


async def jobs(
    settings: Settings,
    database: Database,
    sealer: Sealer,
    policy: Callable[[str], Awaitable[Policy]],
    stack: AsyncExitStack,
    metrics: Metrics | None = None,
) -> Jobs:
    """``policy``: a project's, for the jobs run on its behalf; ``stack``: closes the webhook
    sender with the runtime."""
    runner = JobRunner(
        database.jobs,
        instance_id=settings.server.instance_id,
        settings=settings.jobs,
        policy=policy,
        schedules=database.schedules,
    )
    sender = WebhookSender(settings.webhooks.timeout)
    stack.push_async_callback(sender.aclose)
    webhooks = WebhooksService(
        database.webhooks, sealer, sender, settings.webhooks, nudge=runner.nudge
    )
    deliveries = WebhookDeliveries(database.webhooks, webhooks, sender, settings.webhooks)
    runner.handle(DELIVERY_JOB, deliveries)
    sweep = RetentionSweep(
        database.retention, settings.retention, on_swept=metrics.swept if metrics else None
    )
    runner.handle(SWEEP_JOB, sweep, limit=1)
    await sweep.schedule()
    return Jobs(runner, webhooks, Schedules(database.schedules), Wakeups())
